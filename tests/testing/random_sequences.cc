#include "tests/testing/random_sequences.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fencegate::testing {
namespace {

// The unsigned number in environment variable `name`, or `fallback` when it
// is unset. A value that is not a number is a mistake worth stopping for.
uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    std::fprintf(stderr, "%s=%s is not a number\n", name, text);
    std::abort();
  }
  return value;
}

}  // namespace

SequencePlan PlanShard(int shard, int shards, uint64_t first_seed, uint64_t total) {
  // Rounded up, so shard 0 runs the first sequence even when there is one.
  const uint64_t begin = (total * shard + shards - 1) / shards;
  const uint64_t end = (total * (shard + 1) + shards - 1) / shards;
  return SequencePlan{first_seed + begin, static_cast<int>(end - begin)};
}

SequencePlan PlanShardFromEnv(int shard, int shards, int default_total) {
  return PlanShard(shard, shards, EnvNumber("FENCEGATE_SEQUENCE_SEED", 1),
                   EnvNumber("FENCEGATE_SEQUENCES", default_total));
}

absl::Status RunSequences(const SequencePlan& plan, absl::string_view binary,
                          absl::string_view test_filter,
                          absl::FunctionRef<absl::Status(uint64_t seed)> run) {
  for (int i = 0; i < plan.count; ++i) {
    const uint64_t seed = plan.first_seed + i;
    absl::Status status = run(seed);
    if (status.ok()) continue;
    return absl::Status(
        status.code(),
        absl::StrCat("the sequence with seed ", seed, " failed. Replay it with\n  ",
                     "FENCEGATE_SEQUENCE_SEED=", seed, " FENCEGATE_SEQUENCES=1 ", binary,
                     " --gtest_filter='", test_filter, "'\n", status.message()));
  }
  return absl::OkStatus();
}

absl::Status RunSteps(int steps, absl::FunctionRef<absl::Status(std::string& log)> step,
                      absl::FunctionRef<absl::Status(std::string& log)> last) {
  std::string log;
  absl::Status status;
  for (int i = 0; status.ok() && i <= steps; ++i) {
    std::string line;
    status = i < steps ? step(line) : last(line);
    absl::StrAppend(&log, "  ", i + 1, ". ", line, "\n");
  }
  if (status.ok()) return status;
  return absl::InternalError(absl::StrCat("VIOLATION: ", status.message(),
                                          "\nsteps (what was asked -> answers):\n", log));
}

}  // namespace fencegate::testing
