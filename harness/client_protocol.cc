#include "harness/client_protocol.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fencegate::demo {
namespace {

std::string Clean(absl::string_view text) {
  std::string out(text);
  std::replace(out.begin(), out.end(), '\t', ' ');
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

}  // namespace

Message& Message::Set(absl::string_view key, absl::string_view value) {
  for (auto& [k, v] : fields) {
    if (k == key) {
      v = Clean(value);
      return *this;
    }
  }
  fields.emplace_back(std::string(key), Clean(value));
  return *this;
}

Message& Message::Set(absl::string_view key, uint64_t value) {
  return Set(key, absl::StrCat(value));
}

Message& Message::Set(absl::string_view key, int64_t value) {
  return Set(key, absl::StrCat(value));
}

std::string Message::Get(absl::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return v;
  }
  return "";
}

uint64_t Message::GetUint(absl::string_view key) const {
  uint64_t value = 0;
  return absl::SimpleAtoi(Get(key), &value) ? value : 0;
}

int64_t Message::GetInt(absl::string_view key) const {
  int64_t value = 0;
  return absl::SimpleAtoi(Get(key), &value) ? value : 0;
}

bool Message::Has(absl::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return true;
  }
  return false;
}

std::string FormatMessage(const Message& message) {
  std::string line = Clean(message.word);
  for (const auto& [key, value] : message.fields) {
    absl::StrAppend(&line, "\t", Clean(key), "=", value);
  }
  return line;
}

Message ParseMessage(absl::string_view line) {
  Message message;
  bool first = true;
  for (absl::string_view part : absl::StrSplit(line, '\t')) {
    if (first) {
      message.word = std::string(part);
      first = false;
      continue;
    }
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      message.fields.emplace_back(std::string(part), "");
    } else {
      message.fields.emplace_back(std::string(part.substr(0, eq)),
                                  std::string(part.substr(eq + 1)));
    }
  }
  return message;
}

}  // namespace fencegate::demo
