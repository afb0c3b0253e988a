#include "cli/output.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/exit_codes.h"
#include "common/base/errors.h"
#include "common/metrics/exposition.h"

namespace fencegate::cli {
namespace {

const char* ReasonName(ErrorReason reason) {
  switch (reason) {
    case ErrorReason::kLeaseLost:
      return "lease_lost";
    case ErrorReason::kStaleToken:
      return "stale_token";
    case ErrorReason::kVersionMismatch:
      return "version_mismatch";
    case ErrorReason::kInvalidField:
      return "invalid_field";
    case ErrorReason::kBadSignature:
      return "bad_signature";
    case ErrorReason::kUnspecified:
      break;
  }
  return "";
}

const char* Category(ExitCode code) {
  switch (code) {
    case kExitAborted:
      return "refused";
    case kExitNotAcquired:
      return "not acquired";
    case kExitUsage:
      return "invalid request";
    case kExitUnavailable:
      return "unavailable";
    case kExitDenied:
      return "denied";
    case kExitLeaseLost:
      return "lease lost";
    default:
      return "error";
  }
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = text[i];
    int extra = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, min = 0x10000;
    } else {
      return false;
    }
    if (i + extra >= text.size()) return false;  // truncated sequence
    uint32_t code_point = c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const unsigned char next = text[i + k];
      if ((next & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    // No overlong forms, no surrogates, nothing past U+10FFFF.
    if (code_point < min || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const unsigned char c = ch;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

JsonObject& JsonObject::AddRaw(absl::string_view key, std::string json) {
  fields_.emplace_back(std::string(key), std::move(json));
  return *this;
}

JsonObject& JsonObject::AddString(absl::string_view key, absl::string_view value) {
  return AddRaw(key, JsonQuote(value));
}

JsonObject& JsonObject::AddBytes(absl::string_view key, absl::string_view value) {
  if (IsValidUtf8(value)) return AddString(key, value);
  return AddRaw(absl::StrCat(key, "_base64"), JsonQuote(absl::Base64Escape(value)));
}

JsonObject& JsonObject::AddInt(absl::string_view key, int64_t value) {
  return AddRaw(key, absl::StrCat(value));
}

JsonObject& JsonObject::AddUint(absl::string_view key, uint64_t value) {
  return AddRaw(key, absl::StrCat(value));
}

JsonObject& JsonObject::AddDouble(absl::string_view key, double value) {
  if (!std::isfinite(value)) return AddRaw(key, "null");
  return AddRaw(key, metrics::FormatValue(value));
}

JsonObject& JsonObject::AddBool(absl::string_view key, bool value) {
  return AddRaw(key, value ? "true" : "false");
}

JsonObject& JsonObject::AddObject(absl::string_view key, const JsonObject& value) {
  return AddRaw(key, value.ToString());
}

JsonObject& JsonObject::AddArray(absl::string_view key,
                                 const std::vector<JsonObject>& values) {
  std::vector<std::string> items;
  for (const JsonObject& v : values) items.push_back(v.ToString());
  return AddRaw(key, absl::StrCat("[", absl::StrJoin(items, ","), "]"));
}

std::string JsonObject::ToString() const {
  std::vector<std::string> parts;
  for (const auto& [key, json] : fields_) {
    parts.push_back(absl::StrCat(JsonQuote(key), ":", json));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

void Output::PrintSuccess() const {
  if (json_) {
    JsonObject all;
    all.AddBool("ok", true);
    std::string body = fields_.ToString();
    // Splice: {"ok":true} + the command's fields.
    std::string head = all.ToString();
    head.pop_back();
    std::cout << head << (body.size() > 2 ? "," + body.substr(1) : "}") << "\n";
  } else if (has_raw_) {
    std::fwrite(raw_.data(), 1, raw_.size(), stdout);
  } else {
    for (const std::string& line : lines_) std::cout << line << "\n";
  }
  std::cout.flush();
  std::fflush(stdout);
}

void Output::PrintFailure(absl::string_view command, const absl::Status& status) const {
  const ExitCode code = ExitCodeFor(status);
  if (json_) {
    JsonObject error;
    error.AddString("code", absl::StatusCodeToString(status.code()));
    if (std::optional<ErrorInfo> info = GetErrorInfo(status)) {
      if (*ReasonName(info->reason)) error.AddString("reason", ReasonName(info->reason));
      if (info->current_token != 0) error.AddUint("current_token", info->current_token);
      if (info->current_version != 0) {
        error.AddUint("current_version", info->current_version);
      }
      if (!info->field.empty()) error.AddString("field", info->field);
      if (info->max_value != 0) error.AddUint("max_value", info->max_value);
    }
    error.AddBytes("message", status.message());
    JsonObject all;
    all.AddBool("ok", false).AddInt("exit_code", code).AddObject("error", error);
    std::cout << all.ToString() << "\n";
    std::cout.flush();
    return;
  }
  std::cerr << "fencegate " << command << ": " << Category(code) << ": "
            << status.message() << "\n";
  if (code == kExitUsage && !command.empty()) {
    std::cerr << "See 'fencegate " << command << " --help'.\n";
  }
}

}  // namespace fencegate::cli
