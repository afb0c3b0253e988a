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
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tests/torture/schedule_runner.h"

namespace fencegate::torture {

class RunSummary {
 public:
  // Prints to `out`, which must outlive the summary.
  explicit RunSummary(std::ostream& out = std::cout) : out_(out) {}

  // One schedule's result, printed with every violation, error and
  // undelivered fault, and "run directory kept: DIR" iff `run_dir_kept`:
  // the caller decides what happens to the directory (a failed run keeps
  // it, a planted bug's expected catch does not) before it calls this.
  void Add(const Schedule& schedule, const RunResult& result, absl::Duration took,
           bool run_dir_kept);
  // The summary line.
  std::string Line(const std::string& profile, bool passed) const;
  const std::vector<uint64_t>& failed_seeds() const { return failed_seeds_; }

 private:
  // ", N of them through another gateway" with several gateways; "" else.
  std::string AcrossGateways(const FaultTally& faults) const;
  // The replicated topology's faults ("; lock-service leader: ..."), or "".
  std::string Replicated(const FaultTally& faults) const;
  std::string Disk(const FaultTally& faults) const;
  // "; SQL increments: N ok, N refused, N unknown" with SQL workers; "" else.
  std::string SqlWrites(const CheckStats& stats) const;
  // "; kinds: N shared leases (N shared reads ok, N refused), N permits"
  // when the profile mixes kinds of lock; "" else.
  std::string Kinds(const CheckStats& stats) const;
  std::string Elections(const CheckStats& stats) const;
  std::string HolderKills(const FaultTally& faults) const;

  std::ostream& out_;
  int schedules_ = 0;
  int gateways_ = 1;  // of the topology: more than one also counts races across them
  bool replicated_ = false;  // the topology has etcd: its faults are counted too
  bool disk_ = false;        // the profile fails disks: so are theirs
  bool sql_workers_ = false;  // the profile has SQL workers: their writes are counted
  bool kinds_ = false;        // the profile mixes kinds of lock: their leases are counted
  bool elections_ = false;    // ... or has election rounds: theirs are
  bool holder_kills_ = false;  // the profile kills lock holders
  uint64_t first_seed_ = 0, last_seed_ = 0;
  FaultTally faults_;
  CheckStats stats_;
  int violations_ = 0;
  int errors_ = 0;
  std::vector<uint64_t> failed_seeds_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_RUN_SUMMARY_H_
