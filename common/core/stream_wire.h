// The wire form both servers' session streams share (gateway.proto's
// GatewaySessionRequest/Response, lock.proto's LockSessionRequest/Response):
// a request message is `repeated Call calls = 1`, each Call carrying
// `uint64 request_id = 1` and a `oneof request`; a response message is
// repeated elements, each appended on its own. No gRPC types, so the fuzz
// targets parse exactly what the servers parse.
//
// Parsing is forgiving where it can be exact: a message whose framing is
// sound but one of whose calls does not parse yields that call alone as
// unparseable (with its request_id, when that much can be read), and the
// other calls as usual. Only a message whose list of calls cannot be read
// at all is an error of the whole message. Unknown fields refuse the call
// that carries them (or every call, when the message itself carries them),
// as they refuse a unary request.
//
// Answers are appended one by one as elements of a repeated field of the
// response: the wire form of a message is the concatenation of its
// elements, so elements appended to one buffer form a valid message, and a
// message may be cut between any two of them.
//
// Thread safety: an IncomingMessage is used by one thread at a time (its
// reference count is atomic); the functions are pure.
#ifndef FENCEGATE_COMMON_CORE_STREAM_WIRE_H_
#define FENCEGATE_COMMON_CORE_STREAM_WIRE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/core/validation.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace fencegate {

// ------------------------------------------- the pieces, for the template

namespace stream_wire {

// The bytes of each element of field 1 (`calls`) of a request message,
// without parsing them. False if the message's own framing does not parse.
bool SplitCalls(absl::string_view bytes, std::vector<absl::string_view>* calls);

// INVALID_ARGUMENT for a call that does not parse, with its request_id as
// far as it can be read (0 otherwise), naming the request inside it when
// that is what does not parse ("its write is not a valid
// fencegate.v1.WriteRequest"), as the unary call's refusal would.
absl::Status UnparseableCall(absl::string_view call_bytes,
                             const google::protobuf::Descriptor& call_type,
                             uint64_t* request_id);

// INVALID_ARGUMENT, field "request": a call whose oneof `request` is unset
// ("set one of write, multi_write, read or fence").
absl::Status NoRequest(const google::protobuf::Descriptor& call_type);

// INVALID_ARGUMENT: a message whose framing does not parse.
absl::Status UnparseableMessage(const google::protobuf::Descriptor& request_type);

bool HasUnknownFields(const google::protobuf::Message& message);

}  // namespace stream_wire

// One call of an incoming message.
template <typename Call>
struct IncomingCall {
  uint64_t request_id = 0;
  // The parsed call; null when its bytes do not parse (`error` says so).
  const Call* call = nullptr;
  // INVALID_ARGUMENT for a call that does not parse, carries no request or
  // fields this server does not know, or when the message itself carries
  // such fields.
  absl::Status error;
};

// A parsed incoming message. Its calls point into an arena it owns, so it
// lives until the last of its calls no longer needs them (reference
// counted). `Request` has `repeated Call calls = 1`; `Call` has
// `request_id = 1` and `oneof request`.
template <typename Request, typename Call>
class IncomingMessage {
 public:
  // Never null. With error() not OK, calls() is empty.
  static std::unique_ptr<IncomingMessage> Parse(absl::string_view bytes) {
    std::unique_ptr<IncomingMessage> message(new IncomingMessage());
    message->ParseCalls(bytes);
    return message;
  }

  // INVALID_ARGUMENT when the message's framing does not parse: its calls
  // cannot be told apart, not even their request ids.
  const absl::Status& error() const { return error_; }
  const std::vector<IncomingCall<Call>>& calls() const { return calls_; }
  // For small records that live as long as the message.
  google::protobuf::Arena* arena() { return &arena_; }

  // Starts at 1 (the parser's). The last Unref() deletes the message.
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  IncomingMessage() = default;

  void ParseCalls(absl::string_view bytes) {
    auto* request = google::protobuf::Arena::CreateMessage<Request>(&arena_);
    if (!request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      ParseCallsOneByOne(bytes);
      return;
    }
    // Fields of the message itself that this server does not know (a newer
    // client's): every call of the message is refused, as a unary request
    // with an unknown field is.
    absl::Status message_error;
    if (stream_wire::HasUnknownFields(*request)) {
      message_error =
          RejectUnknownFields(*request);  // names the message's own field first
    }
    calls_.reserve(request->calls_size());
    for (const Call& call : request->calls()) {
      IncomingCall<Call>& in = calls_.emplace_back();
      in.request_id = call.request_id();
      in.call = &call;
      in.error = message_error.ok() ? CheckCall(call) : message_error;
    }
  }

  // When the whole message does not parse: each call on its own.
  void ParseCallsOneByOne(absl::string_view bytes) {
    std::vector<absl::string_view> pieces;
    if (!stream_wire::SplitCalls(bytes, &pieces)) {
      error_ = stream_wire::UnparseableMessage(*Request::descriptor());
      return;
    }
    calls_.reserve(pieces.size());
    for (absl::string_view piece : pieces) {
      auto* call = google::protobuf::Arena::CreateMessage<Call>(&arena_);
      IncomingCall<Call>& in = calls_.emplace_back();
      if (!call->ParseFromArray(piece.data(), static_cast<int>(piece.size()))) {
        in.error =
            stream_wire::UnparseableCall(piece, *Call::descriptor(), &in.request_id);
        continue;
      }
      in.request_id = call->request_id();
      in.call = call;
      in.error = CheckCall(*call);
    }
  }

  static absl::Status CheckCall(const Call& call) {
    if (call.request_case() == Call::REQUEST_NOT_SET &&
        !stream_wire::HasUnknownFields(call)) {
      return stream_wire::NoRequest(*Call::descriptor());
    }
    return RejectUnknownFields(call);
  }

  google::protobuf::Arena arena_;
  absl::Status error_;
  std::vector<IncomingCall<Call>> calls_;
  std::atomic<int> refs_{1};
};

// Appends `element` to `out` as one element of the repeated message field
// `field` of a response message.
void AppendElement(int field, const google::protobuf::MessageLite& element,
                   std::string* out);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STREAM_WIRE_H_
