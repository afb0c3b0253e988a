#include "common/core/stream_wire.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/errors.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace fencegate {
namespace stream_wire {
namespace {

using ::google::protobuf::internal::WireFormatLite;
using ::google::protobuf::io::CodedInputStream;

// Field 1 of both request messages (calls) and calls (request_id).
constexpr int kFirstField = 1;

CodedInputStream InputOf(absl::string_view bytes) {
  return CodedInputStream(reinterpret_cast<const uint8_t*>(bytes.data()),
                          static_cast<int>(bytes.size()));
}

// What can be read of a call that does not parse: its request_id (0 if
// none) and its request field (0 if none).
struct CallHeader {
  uint64_t request_id = 0;
  int request_field = 0;
};

CallHeader PeekCall(absl::string_view call,
                    const google::protobuf::Descriptor& call_type) {
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
    const google::protobuf::FieldDescriptor* field = call_type.FindFieldByNumber(number);
    if (field != nullptr && field->containing_oneof() != nullptr &&
        type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      header.request_field = number;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return header;
  }
}

}  // namespace

bool SplitCalls(absl::string_view bytes, std::vector<absl::string_view>* calls) {
  CodedInputStream in = InputOf(bytes);
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(bytes.size());
    if (WireFormatLite::GetTagFieldNumber(tag) != kFirstField ||
        WireFormatLite::GetTagWireType(tag) !=
            WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
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

absl::Status UnparseableCall(absl::string_view call_bytes,
                             const google::protobuf::Descriptor& call_type,
                             uint64_t* request_id) {
  const CallHeader header = PeekCall(call_bytes, call_type);
  *request_id = header.request_id;
  // Names the request inside the call when that is what does not parse, so
  // the message reads as the unary call's would.
  const google::protobuf::FieldDescriptor* field =
      header.request_field == 0 ? nullptr
                                : call_type.FindFieldByNumber(header.request_field);
  const std::string what = field != nullptr && field->message_type() != nullptr
                               ? absl::StrCat(": its ", field->name(), " is not a valid ",
                                              field->message_type()->full_name())
                               : absl::StrCat(" is not a valid ", call_type.full_name());
  return absl::InvalidArgumentError(absl::StrCat(
      "request ", header.request_id, " of this stream", what,
      ": its bytes do not parse as that protobuf message; fix the client's encoding and "
      "do not retry it unchanged"));
}

absl::Status NoRequest(const google::protobuf::Descriptor& call_type) {
  std::vector<std::string> names;
  if (call_type.oneof_decl_count() > 0) {
    const google::protobuf::OneofDescriptor& request = *call_type.oneof_decl(0);
    for (int i = 0; i < request.field_count(); ++i)
      names.push_back(request.field(i)->name());
  }
  std::string choices = names.empty() ? std::string() : names.back();
  if (names.size() > 1) {
    choices = absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " or ",
                           names.back());
  }
  return InvalidFieldError(
      "request", absl::StrCat("the call carries no request: set one of ", choices));
}

absl::Status UnparseableMessage(const google::protobuf::Descriptor& request_type) {
  return absl::InvalidArgumentError(absl::StrCat(
      "a message on this stream is not a valid ", request_type.full_name(),
      ": its bytes do not parse as that protobuf message, so its requests cannot be told "
      "apart; the stream ends here. Fix the client's encoding"));
}

bool HasUnknownFields(const google::protobuf::Message& message) {
  return !message.GetReflection()->GetUnknownFields(message).empty();
}

}  // namespace stream_wire

void AppendElement(int field, const google::protobuf::MessageLite& element,
                   std::string* out) {
  using ::google::protobuf::internal::WireFormatLite;
  using ::google::protobuf::io::CodedOutputStream;
  const size_t size = element.ByteSizeLong();
  uint8_t prefix[5 + 5];  // the tag and the size, varints of at most 5 bytes each
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(
      WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED), prefix);
  end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), end);
  out->append(reinterpret_cast<const char*>(prefix), end - prefix);
  const size_t at = out->size();
  out->resize(at + size);
  element.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&(*out)[at]));
}

}  // namespace fencegate
