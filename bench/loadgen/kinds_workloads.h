// The workloads of the lock kinds (issue 21, docs/semantics.md "Kinds of
// lock"), one operation at a time, for workloads.cc's closed loop; written
// once against Driver like the others (workloads.h lists them all):
//
//   shared_cycle  a shared acquire (waiting, granted at once when no writer
//                 is around) then its release; one op = both. Every client
//                 on the same resource when resources = 1: readers need no
//                 hand-off, so this should run near lock_cycle on distinct
//                 resources.
//   rw_mix        90 of 100 cycles (pseudo-random, the same sequence on
//                 every system) a shared acquire and release; 10 an
//                 exclusive (write-side) acquire, one fenced write of
//                 value_bytes with its token, release. All acquires wait.
//                 On `resources` hot resources, each cycle on a random one.
//                 ops = all cycles; writes = the exclusive ones, whose
//                 waiting times are the run's wait percentiles.
//   multi_cycle   4 resources acquired at once (Driver::AcquireMany), all 4
//                 released; one op = both. With resources >= 4 x clients
//                 every client takes sets of its own (client c only ever
//                 names resources i with i % clients == c): no contention,
//                 try-locks. With fewer, the sets overlap (4 distinct
//                 resources drawn at random per op) and acquires wait.
//                 Names are passed sorted (the peers take them in order).
//
// Clients check mutual exclusion from their side on every resource: a
// writer granted beside another writer or a reader, or a reader beside a
// writer, is a failed operation.
//
// Thread safety: a KindsClient belongs to one client thread; the
// ExclusionCheck is shared by all of them (atomics).
#ifndef FENCEGATE_BENCH_LOADGEN_KINDS_WORKLOADS_H_
#define FENCEGATE_BENCH_LOADGEN_KINDS_WORKLOADS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/workloads.h"

namespace fencegate::bench {

// multi_cycle: resources per Acquire.
inline constexpr int kMultiResources = 4;
// rw_mix: percent of cycles that read.
inline constexpr int kReadPercent = 90;

// Who the clients believe holds each resource of the run. Enter* after a
// grant, Leave* before the release is sent: so an overlap seen here means
// the system granted two incompatible locks at once.
class ExclusionCheck {
 public:
  explicit ExclusionCheck(int resources);
  absl::Status EnterWriter(int resource);
  void LeaveWriter(int resource);
  absl::Status EnterReader(int resource);
  void LeaveReader(int resource);

 private:
  std::unique_ptr<std::atomic<int>[]> writers_;
  std::unique_ptr<std::atomic<int>[]> readers_;
};

// One operation's outcome, when it did not fail.
struct KindsOp {
  bool abandoned = false;     // the wait was cut off by the run's end (not an op)
  bool not_acquired = false;  // a try-lock refused (an op)
  bool wrote = false;         // rw_mix: an exclusive cycle
  absl::Duration wait;        // rw_mix, exclusive cycles: asking to being granted
};

class KindsClient {
 public:
  // All references outlive the client. `end`: the run's end, where waits stop.
  KindsClient(const RunConfig& config, int index, Driver& driver, ExclusionCheck& check,
              const std::string& value, absl::Time end);

  // An error: the op failed (a driver error, or mutual exclusion violated).
  absl::StatusOr<KindsOp> SharedCycle(uint64_t k);
  absl::StatusOr<KindsOp> RwMix();
  absl::StatusOr<KindsOp> MultiCycle(uint64_t k);

 private:
  AcquireOptions Waiting(LockMode mode) const;
  // multi_cycle's k-th set, as resource indexes (sorted by name).
  std::vector<int> MultiSet(uint64_t k);

  const RunConfig& config_;
  const int index_;
  Driver& driver_;
  ExclusionCheck& check_;
  const std::string& value_;
  const std::string key_;
  const absl::Time end_;
  std::minstd_rand random_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_KINDS_WORKLOADS_H_
