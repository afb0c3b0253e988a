// The gateway Session stream's messages (gateway.proto:
// GatewaySessionRequest in, GatewaySessionResponse out) between bytes and
// what the session (session.h) works with. No gRPC types, so the fuzz
// target parses exactly what the server parses.
//
// Parsing is forgiving where it can be exact: a message whose framing is
// sound but one of whose calls does not parse yields that call alone as
// unparseable (with its request_id, when that much can be read), and the
// other calls as usual. Only a message whose list of calls cannot be read
// at all is an error of the whole message.
//
// Answers are encoded one by one as elements of
// GatewaySessionResponse.results: the wire form of a message is the
// concatenation of its elements, so answers appended to one buffer form a
// valid message, and a message is cut between any two of them.
//
// Thread safety: IncomingMessage is used by one thread at a time (its
// reference count is atomic); the functions are pure.
#ifndef FENCEGATE_GATEWAY_SESSION_WIRE_H_
#define FENCEGATE_GATEWAY_SESSION_WIRE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/requests.h"
#include "google/protobuf/arena.h"

namespace fencegate::gateway {

// One request of an incoming message.
struct IncomingCall {
  uint64_t request_id = 0;
  // The parsed call; null when its bytes do not parse (`error` says so).
  const fencegate::v1::GatewayCall* call = nullptr;
  // INVALID_ARGUMENT for a call that does not parse or carries fields this
  // server does not know, or when the message itself carries such fields.
  absl::Status error;
};

// A parsed incoming message. Its calls point into an arena it owns; the
// FencedStore args made from them point there too, so the message lives
// until the last of its calls is answered (reference counted).
class IncomingMessage {
 public:
  // Never null. With error() not OK, calls() is empty.
  static std::unique_ptr<IncomingMessage> Parse(absl::string_view bytes);

  // INVALID_ARGUMENT when the message's framing does not parse: its calls
  // cannot be told apart, not even their request ids.
  const absl::Status& error() const { return error_; }
  const std::vector<IncomingCall>& calls() const { return calls_; }
  // For small records that live as long as the message.
  google::protobuf::Arena* arena() { return &arena_; }

  // Starts at 1 (the parser's). The last Unref() deletes the message.
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  IncomingMessage() = default;
  void ParseCalls(absl::string_view bytes);
  // When the whole message does not parse: each call on its own.
  void ParseCallsOneByOne(absl::string_view bytes);

  google::protobuf::Arena arena_;
  absl::Status error_;
  std::vector<IncomingCall> calls_;
  std::atomic<int> refs_{1};
};

// How a call's answer is encoded: which response field carries it.
enum class CallKind { kWrite, kMultiWrite, kRead, kFence };

// Appends one answer to `out` (see the header). `multi_count`: for
// kMultiWrite, how many versions the response lists.
void AppendWriteResult(uint64_t request_id, CallKind kind, int multi_count,
                       const absl::StatusOr<WriteResult>& result, std::string* out);
void AppendReadResult(uint64_t request_id, absl::StatusOr<ReadResult> result,
                      std::string* out);
void AppendFenceResult(uint64_t request_id, const absl::StatusOr<FenceResult>& result,
                       std::string* out);
// An answer that is the status alone. REQUIRES: !status.ok().
void AppendError(uint64_t request_id, const absl::Status& status, std::string* out);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SESSION_WIRE_H_
