// RunSummary: adds up the schedules of one torture invocation and prints
// them: one line per schedule as it ends, and the summary line
//   torture: 8 schedules (seeds 41..48, profile default): 48 pauses of lock
//   holders (30 past their TTL, 20 before a write), 16 stale-writer races,
//   16 kills, 16 failpoint crashes, ... 412 stale writes refused,
//   0 violations: PASS
//
// Thread safety: one thread.
#ifndef FENCEGATE_TESTS_TORTURE_RUN_SUMMARY_H_
#define FENCEGATE_TESTS_TORTURE_RUN_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tests/torture/schedule_runner.h"

namespace fencegate::torture {

class RunSummary {
 public:
  // One schedule's result, printed to stdout with every violation, error
  // and undelivered fault.
  void Add(const Schedule& schedule, const RunResult& result, absl::Duration took);
  // The summary line.
  std::string Line(const std::string& profile, bool passed) const;
  const std::vector<uint64_t>& failed_seeds() const { return failed_seeds_; }

 private:
  // ", N of them through another gateway" with several gateways; "" else.
  std::string AcrossGateways(const FaultTally& faults) const;

  int schedules_ = 0;
  int gateways_ = 1;  // of the topology: more than one also counts races across them
  uint64_t first_seed_ = 0, last_seed_ = 0;
  FaultTally faults_;
  CheckStats stats_;
  int violations_ = 0;
  int errors_ = 0;
  std::vector<uint64_t> failed_seeds_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_RUN_SUMMARY_H_
