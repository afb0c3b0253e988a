// The shared client scenarios' file (tests/scenarios/client_scenarios.json,
// docs/testing.md "Client scenarios") as the C++ runner reads it
// (client_scenarios_test.cc): parsed with protobuf's JSON parser into
// google.protobuf.Struct values, as the tree's other JSON is, with typed
// access to a step's values. A value of the wrong type adds a gtest failure
// (and gives the fallback), so a malformed file fails the runner rather
// than being read as something else.
//
// Thread safety: free functions; the accessors report to the calling
// thread's current test.
#ifndef FENCEGATE_TESTS_E2E_SCENARIO_FILE_H_
#define FENCEGATE_TESTS_E2E_SCENARIO_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"

namespace fencegate::e2e::scenario_file {

// The environment's FENCEGATE_CLIENT_SCENARIOS (a mutant of the file, to
// show that the runner fails on it), or the tree's file
// (FENCEGATE_CLIENT_SCENARIOS_JSON, set by tests/e2e_tests.cmake).
std::string ScenarioFile();

// The file's scenarios, each a Struct {name, description, steps}; an error
// if the file does not parse, has no "scenarios" list, or a name is not
// unique lower_snake_case.
absl::StatusOr<std::vector<google::protobuf::Struct>> LoadScenarios();

// The scenarios' names, for the test names; if the file does not load, one
// name whose test fails saying why.
std::vector<std::string> ScenarioNames();

// A step as one line of JSON, for failure messages.
std::string ToJson(const google::protobuf::Struct& step);

// `key` of `step`, or nullptr when absent.
const google::protobuf::Value* Arg(const google::protobuf::Struct& step,
                                   const std::string& key);
// A string (`fallback` when absent).
std::string String(const google::protobuf::Struct& step, const std::string& key,
                   std::string fallback = "");
// A whole number >= 0 (nullopt when absent, or not such a number).
std::optional<uint64_t> Number(const google::protobuf::Value& value);
std::optional<uint64_t> Number(const google::protobuf::Struct& step,
                               const std::string& key);
uint64_t Number(const google::protobuf::Struct& step, const std::string& key,
                uint64_t fallback);
// A bool (false when absent).
bool Bool(const google::protobuf::Struct& step, const std::string& key);

}  // namespace fencegate::e2e::scenario_file

#endif  // FENCEGATE_TESTS_E2E_SCENARIO_FILE_H_
