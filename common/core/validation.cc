#include "common/core/validation.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "google/protobuf/message.h"
#include "google/protobuf/unknown_field_set.h"

namespace fencegate {
namespace {

int64_t ToMs(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

// Length of the UTF-8 sequence starting at value[i], or 0 if it is not a
// valid one (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF).
size_t Utf8SequenceLength(absl::string_view value, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(value[k]); };
  const unsigned char c = byte(i);
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > value.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

absl::Status ValidateName(absl::string_view field, absl::string_view value,
                          size_t max_bytes) {
  if (value.empty()) {
    return InvalidFieldError(field, absl::StrCat(field, " is empty; it must be 1 to ",
                                                 max_bytes, " bytes"));
  }
  return ValidateOptionalName(field, value, max_bytes);
}

absl::Status ValidateOptionalName(absl::string_view field,
                                  absl::string_view value, size_t max_bytes) {
  if (value.size() > max_bytes) {
    return InvalidFieldError(
        field, absl::StrCat(field, " is ", value.size(),
                            " bytes; the limit is ", max_bytes, " bytes"));
  }
  for (size_t i = 0; i < value.size();) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      return InvalidFieldError(
          field, absl::StrCat(field, " has a control character (byte ",
                              static_cast<int>(c), ") at offset ", i,
                              "; use printable characters"));
    }
    size_t length = Utf8SequenceLength(value, i);
    if (length == 0) {
      return InvalidFieldError(
          field, absl::StrCat(field, " is not valid UTF-8 at offset ", i,
                              "; names must be UTF-8 text"));
    }
    i += length;
  }
  return absl::OkStatus();
}

absl::Status ValidateDuration(absl::string_view field, absl::Duration value,
                              absl::Duration min, absl::Duration max) {
  if (value < min || value > max) {
    return InvalidFieldError(
        field,
        absl::StrCat(field, " is ", ToMs(value), "; it must be between ", ToMs(min),
                     " and ", ToMs(max), " ms"),
        static_cast<uint64_t>(std::max<int64_t>(0, ToMs(max))));
  }
  return absl::OkStatus();
}

absl::Status ValidateToken(absl::string_view field, uint64_t token) {
  if (token == 0) {
    return InvalidFieldError(
        field, absl::StrCat(field, " is 0; pass the token of a lease from "
                                   "the lock service (tokens start at 1)"));
  }
  return absl::OkStatus();
}

absl::Status RejectUnknownFields(const google::protobuf::Message& message) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  const google::protobuf::UnknownFieldSet& unknown =
      reflection->GetUnknownFields(message);
  if (!unknown.empty()) {
    return InvalidFieldError(
        absl::StrCat(message.GetDescriptor()->name(), ".", unknown.field(0).number()),
        absl::StrCat(message.GetDescriptor()->full_name(),
                     " has unknown field number ", unknown.field(0).number(),
                     "; this server does not support it (upgrade the server "
                     "or drop the field)"));
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      continue;
    }
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        absl::Status s = RejectUnknownFields(
            reflection->GetRepeatedMessage(message, field, i));
        if (!s.ok()) return s;
      }
    } else {
      absl::Status s = RejectUnknownFields(reflection->GetMessage(message, field));
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace fencegate
