#include "tests/e2e/scenario_file.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace fencegate::e2e::scenario_file {

using ::google::protobuf::Struct;
using ::google::protobuf::Value;

std::string ScenarioFile() {
  const char* path = std::getenv("FENCEGATE_CLIENT_SCENARIOS");
  return path != nullptr && *path != '\0' ? path : FENCEGATE_CLIENT_SCENARIOS_JSON;
}

absl::StatusOr<std::vector<Struct>> LoadScenarios() {
  std::ifstream in(ScenarioFile());
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", ScenarioFile()));
  std::stringstream text;
  text << in.rdbuf();
  Struct file;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(text.str(), &file);
      !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ScenarioFile(), " is not valid JSON: ", parsed.ToString()));
  }
  auto list = file.fields().find("scenarios");
  if (list == file.fields().end() || !list->second.has_list_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ScenarioFile(), " has no scenarios list"));
  }
  std::vector<Struct> scenarios;
  std::set<std::string> names;
  for (const Value& s : list->second.list_value().values()) {
    const std::string name = s.struct_value().fields().count("name") > 0
                                 ? s.struct_value().fields().at("name").string_value()
                                 : "";
    if (!s.has_struct_value() || name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
            std::string::npos ||
        !names.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          ScenarioFile(), ": every scenario needs a unique lower_snake_case name, not '",
          name, "'"));
    }
    scenarios.push_back(s.struct_value());
  }
  return scenarios;
}

std::vector<std::string> ScenarioNames() {
  absl::StatusOr<std::vector<Struct>> scenarios = LoadScenarios();
  if (!scenarios.ok()) return {"the_scenario_file_does_not_load"};
  std::vector<std::string> names;
  for (const Struct& s : *scenarios) {
    names.push_back(s.fields().at("name").string_value());
  }
  return names;
}

std::string ToJson(const Struct& step) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(step, &json);
  return json;
}

const Value* Arg(const Struct& step, const std::string& key) {
  auto it = step.fields().find(key);
  return it == step.fields().end() ? nullptr : &it->second;
}

std::string String(const Struct& step, const std::string& key, std::string fallback) {
  const Value* v = Arg(step, key);
  if (v == nullptr) return fallback;
  if (!v->has_string_value()) ADD_FAILURE() << "'" << key << "' must be a string";
  return v->string_value();
}

std::optional<uint64_t> Number(const Value& v) {
  const double n = v.number_value();
  if (!v.has_number_value() || n < 0 || n >= 9007199254740992.0 ||  // 2^53: exact
      n != static_cast<double>(static_cast<uint64_t>(n))) {
    ADD_FAILURE() << "expected a whole number >= 0, not " << v.DebugString();
    return std::nullopt;
  }
  return static_cast<uint64_t>(n);
}

std::optional<uint64_t> Number(const Struct& step, const std::string& key) {
  const Value* v = Arg(step, key);
  return v == nullptr ? std::nullopt : Number(*v);
}

uint64_t Number(const Struct& step, const std::string& key, uint64_t fallback) {
  return Number(step, key).value_or(fallback);
}

bool Bool(const Struct& step, const std::string& key) {
  const Value* v = Arg(step, key);
  if (v != nullptr && !v->has_bool_value())
    ADD_FAILURE() << "'" << key << "' must be a bool";
  return v != nullptr && v->bool_value();
}

}  // namespace fencegate::e2e::scenario_file
