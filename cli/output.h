// Output of the fencegate CLI. A command fills one Output with both forms of
// its answer: lines of text for people and fields of a JSON object for
// programs. With --json exactly one JSON object is printed on stdout, on
// success {"ok":true,...} and on failure {"ok":false,"error":{...}};
// without it the text goes to stdout and errors to stderr.
//
// Thread safety: not thread-safe; one command uses one Output.
#ifndef FENCEGATE_EXAMPLES_CLI_OUTPUT_H_
#define FENCEGATE_EXAMPLES_CLI_OUTPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fencegate::cli {

// A JSON object built field by field, in insertion order.
class JsonObject {
 public:
  // Strings must be valid UTF-8 (see AddBytes for arbitrary bytes).
  JsonObject& AddString(absl::string_view key, absl::string_view value);
  // Valid UTF-8 goes in `key`; anything else in `key`_base64.
  JsonObject& AddBytes(absl::string_view key, absl::string_view value);
  JsonObject& AddInt(absl::string_view key, int64_t value);
  JsonObject& AddUint(absl::string_view key, uint64_t value);
  // A finite number in its shortest form (integers without a fraction).
  JsonObject& AddDouble(absl::string_view key, double value);
  JsonObject& AddBool(absl::string_view key, bool value);
  JsonObject& AddObject(absl::string_view key, const JsonObject& value);
  JsonObject& AddArray(absl::string_view key, const std::vector<JsonObject>& values);

  std::string ToString() const;

 private:
  JsonObject& AddRaw(absl::string_view key, std::string json);
  std::vector<std::pair<std::string, std::string>> fields_;  // key, JSON text
};

bool IsValidUtf8(absl::string_view text);
// `text` (valid UTF-8) as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);

class Output {
 public:
  explicit Output(bool json) : json_(json) {}

  bool json() const { return json_; }
  // A line of the human form (ignored with --json).
  void Line(std::string text) { lines_.push_back(std::move(text)); }
  // Bytes printed as they are instead of the lines (read --raw).
  void Raw(std::string bytes) { raw_ = std::move(bytes), has_raw_ = true; }
  // The JSON form's fields (besides "ok").
  JsonObject& fields() { return fields_; }

  // Prints the answer of a command that succeeded.
  void PrintSuccess() const;
  // Prints why `command` failed: what was wrong and what to do.
  void PrintFailure(absl::string_view command, const absl::Status& status) const;

 private:
  const bool json_;
  std::vector<std::string> lines_;
  std::string raw_;
  bool has_raw_ = false;
  JsonObject fields_;
};

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_OUTPUT_H_
