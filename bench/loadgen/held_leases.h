// What a run shares between its clients beside the driver: the leases a
// fenced write is fenced by, taken before the clock starts, and the first
// error of the run. Used by both client shapes (workloads.h, one thread per
// client; loop_workloads.h, event-loop clients).
//
// Thread safety: FirstError is thread-safe. HeldLeases: Take() and
// Release() from one thread; lock() from any once Take() returned.
#ifndef FENCEGATE_BENCH_LOADGEN_HELD_LEASES_H_
#define FENCEGATE_BENCH_LOADGEN_HELD_LEASES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/workloads.h"

namespace fencegate::bench {

// Keeps the first error message of the run.
class FirstError {
 public:
  void Record(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    if (message_.empty()) message_ = status.ToString();
  }
  std::string Take() {
    absl::MutexLock lock(&mu_);
    return std::move(message_);
  }

 private:
  absl::Mutex mu_;
  std::string message_ ABSL_GUARDED_BY(mu_);
};

// fenced_write's leases, taken before the clock starts by `setup_threads`
// drivers of their own, and released after it stops; hold's, taken by one
// driver per client and never released (they stay held until their TTL).
class HeldLeases {
 public:
  // need_token false: Redis takes its cheapest lock (plain SET NX PX).
  // request_ids: each Acquire carries one, as the client library's do.
  absl::Status Take(const RunConfig& config, const DriverFactory& make_driver,
                    int setup_threads, bool need_token = true, bool request_ids = false);

  const HeldLock& lock(int resource) const { return locks_[resource]; }

  // Releases every lease, on the drivers that took them. Best effort.
  void Release();

 private:
  std::vector<HeldLock> locks_;
  std::vector<std::unique_ptr<Driver>> drivers_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_HELD_LEASES_H_
