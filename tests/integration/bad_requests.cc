#include "tests/integration/bad_requests.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/grpc/grpc_status.h"

namespace fencegate::conformance {

std::string Deviation(const BadRequest& c, const testing::RawReply& reply) {
  const grpc::Status& s = reply.status;
  if (s.error_code() != c.code) {
    return absl::StrCat("answered code ", s.error_code(), " (", s.error_message(),
                        "); docs/errors.md says ", c.code);
  }
  if (s.ok()) return c.check_response ? c.check_response(reply.response) : "";
  if (!absl::StrContains(s.error_message(), c.message_has)) {
    return absl::StrCat("the message does not say '", c.message_has, "': ", s.error_message());
  }
  if (c.reason == ErrorReason::kUnspecified) return "";
  const absl::Status status = FromGrpcStatus(s);
  const ErrorInfo info = GetErrorInfo(status).value_or(ErrorInfo());
  if (info.reason != c.reason) {
    return absl::StrCat("ErrorDetail reason ", static_cast<int>(info.reason), ", expected ",
                        static_cast<int>(c.reason), " (", s.error_message(), ")");
  }
  if (info.field != c.field) {
    return absl::StrCat("names field '", info.field, "', expected '", c.field, "'");
  }
  // The message must say which field too: by name, or by number when the
  // server does not know it ("Mutation.42").
  const std::string number = c.field.substr(c.field.rfind('.') + 1);
  if (c.reason == ErrorReason::kInvalidField && !absl::StrContains(s.error_message(), c.field) &&
      !absl::StrContains(s.error_message(), "unknown field number " + number)) {
    return absl::StrCat("the message does not name ", c.field, ": ", s.error_message());
  }
  if (c.current_token && info.current_token != *c.current_token) {
    return absl::StrCat("current token ", info.current_token, ", expected ",
                        *c.current_token);
  }
  return "";
}

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

std::string Tag(int number, int wire_type) {
  return Varint((static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(wire_type));
}

std::string AppendRaw(const google::protobuf::Message& message, const std::string& bytes) {
  return message.SerializeAsString() + bytes;
}

namespace {

BadRequest FromMessage(const std::string& method, const std::string& name,
                       const google::protobuf::Message& request, grpc::StatusCode code) {
  BadRequest c;
  c.name = absl::StrCat(method.substr(method.rfind('/') + 1), ": ", name);
  c.method = method;
  c.bytes = request.SerializeAsString();
  c.code = code;
  return c;
}

}  // namespace

BadRequest Invalid(const std::string& method, const std::string& name,
                   const google::protobuf::Message& request, const std::string& field) {
  BadRequest c = FromMessage(method, name, request, grpc::StatusCode::INVALID_ARGUMENT);
  c.reason = ErrorReason::kInvalidField;
  c.field = field;
  return c;
}

BadRequest Aborted(const std::string& method, const std::string& name,
                   const google::protobuf::Message& request, ErrorReason reason,
                   uint64_t current_token) {
  BadRequest c = FromMessage(method, name, request, grpc::StatusCode::ABORTED);
  c.reason = reason;
  c.current_token = current_token;
  return c;
}

BadRequest Unsigned(const std::string& method, const std::string& name,
                    const google::protobuf::Message& request, const std::string& message_has) {
  BadRequest c = FromMessage(method, name, request, grpc::StatusCode::PERMISSION_DENIED);
  c.reason = ErrorReason::kBadSignature;
  c.signed_only = true;
  c.message_has = message_has;
  return c;
}

BadRequest Oversized(const std::string& method, const google::protobuf::Message& request) {
  return FromMessage(method, "a message over the receive limit", request,
                     grpc::StatusCode::RESOURCE_EXHAUSTED);
}

std::vector<BadSignature> BadSignatures(const v1::TokenSignature& valid) {
  std::vector<BadSignature> out;
  out.push_back({"no signature", v1::TokenSignature(), ""});
  v1::TokenSignature forged = valid;
  forged.set_mac(std::string(valid.mac().size(), '\0'));
  out.push_back({"a forged signature", forged, ""});
  v1::TokenSignature flipped = valid;
  flipped.mutable_mac()->back() ^= 1;
  out.push_back({"a signature with one bit flipped", flipped, ""});
  v1::TokenSignature truncated = valid;
  truncated.mutable_mac()->resize(valid.mac().size() / 2);
  out.push_back({"a truncated signature", truncated, ""});
  v1::TokenSignature unknown_key = valid;
  unknown_key.set_key_id("no-such-key");
  out.push_back({"a signature by an unknown key", unknown_key, "signature.key_id"});
  v1::TokenSignature not_utf8 = valid;
  not_utf8.set_key_id(kNotUtf8KeyId);
  out.push_back({"a key id that is not UTF-8", not_utf8, "signature.key_id"});
  v1::TokenSignature no_mac;
  no_mac.set_key_id(valid.key_id());
  out.push_back({"a key id without a MAC", no_mac, ""});
  return out;
}

std::vector<BadName> BadNames(size_t max_bytes) {
  return {
      {"one byte over the limit", std::string(max_bytes + 1, 'n')},
      {"a megabyte long", std::string(1 << 20, 'n')},
      {"a lone continuation byte", "\x80name"},
      {"the byte 0xff", "na\xffme"},
      {"a truncated 2-byte sequence", "name\xc3"},
      {"an overlong encoding", "\xc0\xaf"},
      {"a UTF-16 surrogate", "\xed\xa0\x80"},
      {"a code point past U+10FFFF", "\xf4\x90\x80\x80"},
      {"a newline", "na\nme"},
      {"a NUL byte", std::string("na\0me", 5)},
      {"DEL", "name\x7f"},
      {"a tab", "\tname"},
      {"an escape sequence", "\x1b[31mname"},
  };
}

void AddWireCases(const std::string& method, const google::protobuf::Message& message,
                  std::vector<BadRequest>& cases) {
  const std::string type = message.GetDescriptor()->name();
  // Field 1 is bytes in every request but WatchFencesRequest (a varint):
  // sent with the other wire type it is a field this server does not know.
  const bool varint_first =
      message.GetDescriptor()->field(0)->type() != google::protobuf::FieldDescriptor::TYPE_BYTES;
  struct Unknown {
    std::string what;
    int number;
    std::string bytes;
  };
  const std::vector<Unknown> unknown = {
      {"an unknown varint field", 99, Tag(99, 0) + Varint(1)},
      {"an unknown length-delimited field", 1000, Tag(1000, 2) + Varint(3) + "xyz"},
      {"an unknown fixed64 field", 15, Tag(15, 1) + std::string(8, '\x01')},
      {"an unknown fixed32 field", 16, Tag(16, 5) + std::string(4, '\x01')},
      {"an unknown group", 17, Tag(17, 3) + Tag(17, 4)},
      {"the largest field number", 536870911, Tag(536870911, 0) + Varint(0)},
      {"field 1 with the wrong wire type", 1,
       varint_first ? Tag(1, 2) + Varint(1) + "x" : Tag(1, 0) + Varint(7)},
  };
  for (const Unknown& u : unknown) {
    BadRequest c;
    c.name = absl::StrCat(method.substr(method.rfind('/') + 1), ": ", u.what);
    c.method = method;
    c.bytes = AppendRaw(message, u.bytes);
    c.reason = ErrorReason::kInvalidField;
    c.field = absl::StrCat(type, ".", u.number);
    cases.push_back(std::move(c));
  }
  // Bytes that are no protobuf message: refused before any handler runs,
  // with a message that names the type
  // (common/server/malformed_request_interceptor.h).
  const std::vector<std::pair<std::string, std::string>> malformed = {
      {"a length past the end", Tag(1, 2) + Varint(5) + "ab"},
      {"a truncated varint", Tag(1, 0) + "\x80"},
      {"wire type 6", Tag(1, 6)},
      {"wire type 7", Tag(1, 7)},
      {"field number 0", std::string(1, '\0')},
      {"an unterminated group", Tag(20, 3)},
      {"an end-group without a start", Tag(20, 4)},
      {"an 11-byte varint", Tag(1, 0) + std::string(10, '\xff') + "\x01"},
  };
  for (const auto& [what, bytes] : malformed) {
    BadRequest c;
    c.name = absl::StrCat(method.substr(method.rfind('/') + 1), ": malformed, ", what);
    c.method = method;
    c.bytes = AppendRaw(message, bytes);
    c.message_has = absl::StrCat("is not a valid ", message.GetDescriptor()->full_name());
    cases.push_back(std::move(c));
  }
}

}  // namespace fencegate::conformance
