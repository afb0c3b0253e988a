// Seeded random operation sequences, for the model-based tests of the two
// cores (tests/unit/lock_sequence_test.cc, fence_sequence_test.cc): which
// sequences a test shard runs, the random choices of one sequence, and how
// its steps run and are reported when one fails.
//
// Every sequence has a seed of its own; the same seed makes the same
// sequence, so a failure is replayed by its seed alone. The environment
// chooses the seeds (docs/sequences-and-bad-input.md):
//   FENCEGATE_SEQUENCE_SEED=S  seed of a suite's first sequence (default 1);
//                              sequence i has seed S + i
//   FENCEGATE_SEQUENCES=N      sequences per suite, over all its shards
//                              (default: the suite's own)
// so `FENCEGATE_SEQUENCE_SEED=S FENCEGATE_SEQUENCES=1` runs sequence S
// alone (in shard 0).
//
// Thread safety: a SequenceRng belongs to one thread.
#ifndef FENCEGATE_TESTS_TESTING_RANDOM_SEQUENCES_H_
#define FENCEGATE_TESTS_TESTING_RANDOM_SEQUENCES_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fencegate::testing {

// The seeds one shard runs: first_seed, first_seed + 1, ... (count of them).
struct SequencePlan {
  uint64_t first_seed = 1;
  int count = 0;
};

// Shard `shard` of `shards` of `total` sequences whose first seed is
// `first_seed`. Shards split the seeds without gap or overlap, and shard 0
// gets the first. REQUIRES: 0 <= shard < shards.
SequencePlan PlanShard(int shard, int shards, uint64_t first_seed, uint64_t total);
// The same with the seed and total from the environment, where set.
SequencePlan PlanShardFromEnv(int shard, int shards, int default_total);

// Runs `run(seed)` for every seed of `plan`, stopping at the first that
// fails. Returns that failure, with its seed and the command that replays
// it: `binary` --gtest_filter=`test_filter` under the environment above.
absl::Status RunSequences(const SequencePlan& plan, absl::string_view binary,
                          absl::string_view test_filter,
                          absl::FunctionRef<absl::Status(uint64_t seed)> run);

// The random choices of one sequence. std::mt19937_64 gives the same
// numbers on every platform; the helpers below use no std distribution
// (whose results differ between standard libraries).
class SequenceRng {
 public:
  explicit SequenceRng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) { return engine_() % n; }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  // True with probability percent / 100.
  bool Percent(int percent) { return static_cast<int>(Below(100)) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[Below(from.size())];
  }

 private:
  std::mt19937_64 engine_;
};

// Runs `steps` calls of `step` and then one of `last` (a sequence ends the
// same way every time: with a crash whose reopened state is checked), each
// describing itself in its `log` line, until one fails. Returns OK, or
// INTERNAL "VIOLATION: <its message>" followed by every line so far.
absl::Status RunSteps(int steps, absl::FunctionRef<absl::Status(std::string& log)> step,
                      absl::FunctionRef<absl::Status(std::string& log)> last);

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_RANDOM_SEQUENCES_H_
