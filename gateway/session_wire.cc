#include "gateway/session_wire.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/validation.h"
#include "fencegate/v1/errors.pb.h"
#include "gateway/request_protos.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;
using ::google::protobuf::internal::WireFormatLite;
using ::google::protobuf::io::CodedInputStream;
using ::google::protobuf::io::CodedOutputStream;

// Field 1 of both GatewaySessionRequest (calls) and GatewayCall (request_id).
constexpr int kFirstField = 1;

CodedInputStream InputOf(absl::string_view bytes) {
  return CodedInputStream(reinterpret_cast<const uint8_t*>(bytes.data()),
                          static_cast<int>(bytes.size()));
}

// The bytes of each `calls` element of a GatewaySessionRequest, without
// parsing them. False if the message's own framing does not parse.
bool SplitCalls(absl::string_view bytes, std::vector<absl::string_view>* calls) {
  CodedInputStream in = InputOf(bytes);
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(bytes.size());
    if (WireFormatLite::GetTagFieldNumber(tag) != kFirstField ||
        WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length)) return false;
    const int at = in.CurrentPosition();
    if (length > bytes.size() - at || !in.Skip(static_cast<int>(length))) return false;
    calls->push_back(bytes.substr(at, length));
  }
}

// What can be read of a GatewayCall that does not parse: its request_id
// (0 if none) and its request field (0 if none).
struct CallHeader {
  uint64_t request_id = 0;
  int request_field = 0;
};

CallHeader PeekCall(absl::string_view call) {
  CodedInputStream in = InputOf(call);
  CallHeader header;
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return header;
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const auto type = WireFormatLite::GetTagWireType(tag);
    if (number == kFirstField && type == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&header.request_id)) return header;
      continue;
    }
    const google::protobuf::FieldDescriptor* field =
        v1::GatewayCall::descriptor()->FindFieldByNumber(number);
    if (field != nullptr && field->containing_oneof() != nullptr &&
        type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      header.request_field = number;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return header;
  }
}

// Names the request inside the call when that is what does not parse, so
// the message reads as the unary call's would ("is not a valid
// fencegate.v1.WriteRequest").
absl::Status UnparseableCall(const CallHeader& header) {
  const google::protobuf::FieldDescriptor* field =
      header.request_field == 0
          ? nullptr
          : v1::GatewayCall::descriptor()->FindFieldByNumber(header.request_field);
  const std::string what =
      field != nullptr ? absl::StrCat(": its ", field->name(), " is not a valid ",
                                      field->message_type()->full_name())
                       : " is not a valid fencegate.v1.GatewayCall";
  return absl::InvalidArgumentError(absl::StrCat(
      "request ", header.request_id, " of this stream", what,
      ": its bytes do not parse as that protobuf message; fix the client's encoding and "
      "do not retry it unchanged"));
}

bool HasUnknownFields(const google::protobuf::Message& message) {
  return !message.GetReflection()->GetUnknownFields(message).empty();
}

absl::Status NoRequest() {
  return InvalidFieldError(
      "request", "the call carries no request: set one of write, multi_write, read or fence");
}

// Appends `result` as one element of GatewaySessionResponse.results.
void Append(const v1::GatewayResult& result, std::string* out) {
  const size_t size = result.ByteSizeLong();
  uint8_t prefix[1 + 5];  // the tag, and the size as a varint32 (at most 5 bytes)
  prefix[0] = static_cast<uint8_t>(
      WireFormatLite::MakeTag(kFirstField, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  uint8_t* end =
      CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), prefix + 1);
  out->append(reinterpret_cast<const char*>(prefix), end - prefix);
  const size_t at = out->size();
  out->resize(at + size);
  result.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&(*out)[at]));
}

}  // namespace

std::unique_ptr<IncomingMessage> IncomingMessage::Parse(absl::string_view bytes) {
  std::unique_ptr<IncomingMessage> message(new IncomingMessage());
  message->ParseCalls(bytes);
  return message;
}

void IncomingMessage::ParseCalls(absl::string_view bytes) {
  auto* request =
      google::protobuf::Arena::CreateMessage<v1::GatewaySessionRequest>(&arena_);
  if (!request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    ParseCallsOneByOne(bytes);
    return;
  }
  // Fields of the message itself that this server does not know (a newer
  // client's): every call of the message is refused, as a unary request
  // with an unknown field is.
  absl::Status message_error;
  if (HasUnknownFields(*request)) {
    message_error = RejectUnknownFields(*request);  // names the message's own field first
  }
  calls_.reserve(request->calls_size());
  for (const v1::GatewayCall& call : request->calls()) {
    IncomingCall& in = calls_.emplace_back();
    in.request_id = call.request_id();
    in.call = &call;
    if (!message_error.ok()) {
      in.error = message_error;
    } else if (call.request_case() == v1::GatewayCall::REQUEST_NOT_SET) {
      in.error = !HasUnknownFields(call) ? NoRequest() : RejectUnknownFields(call);
    } else {
      in.error = RejectUnknownFields(call);
    }
  }
}

void IncomingMessage::ParseCallsOneByOne(absl::string_view bytes) {
  std::vector<absl::string_view> pieces;
  if (!SplitCalls(bytes, &pieces)) {
    error_ = absl::InvalidArgumentError(
        "a message on this stream is not a valid fencegate.v1.GatewaySessionRequest: its "
        "bytes do not parse as that protobuf message, so its requests cannot be told "
        "apart; the stream ends here. Fix the client's encoding");
    return;
  }
  calls_.reserve(pieces.size());
  for (absl::string_view piece : pieces) {
    auto* call = google::protobuf::Arena::CreateMessage<v1::GatewayCall>(&arena_);
    IncomingCall& in = calls_.emplace_back();
    if (!call->ParseFromArray(piece.data(), static_cast<int>(piece.size()))) {
      const CallHeader header = PeekCall(piece);
      in.request_id = header.request_id;
      in.error = UnparseableCall(header);
      continue;
    }
    in.request_id = call->request_id();
    in.call = call;
    in.error = call->request_case() == v1::GatewayCall::REQUEST_NOT_SET &&
                       !HasUnknownFields(*call)
                   ? NoRequest()
                   : RejectUnknownFields(*call);
  }
}

void AppendWriteResult(uint64_t request_id, CallKind kind, int multi_count,
                       const absl::StatusOr<WriteResult>& result, std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  if (kind == CallKind::kMultiWrite) {
    FillMultiWriteResponse(*result, multi_count, answer.mutable_multi_write());
  } else {
    FillWriteResponse(*result, answer.mutable_write());
  }
  Append(answer, out);
}

void AppendReadResult(uint64_t request_id, absl::StatusOr<ReadResult> result,
                      std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  FillReadResponse(*std::move(result), answer.mutable_read());
  Append(answer, out);
}

void AppendFenceResult(uint64_t request_id, const absl::StatusOr<FenceResult>& result,
                       std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  FillFenceResponse(*result, answer.mutable_fence());
  Append(answer, out);
}

void AppendError(uint64_t request_id, const absl::Status& status, std::string* out) {
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  ToRpcStatus(status, answer.mutable_error());
  Append(answer, out);
}

}  // namespace fencegate::gateway
