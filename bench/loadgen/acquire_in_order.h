// AcquireEachInOrder: several locks through a driver that has no call for
// several at once, the way the peers' recipes take them: one by one in the
// order given, each with the options' wait, and if one is not granted (or
// fails) the ones already held are released again and nothing is held.
//
//   etcd   several concurrency.Mutex locks in sorted order (the usual way to
//          take a set without deadlock: every client takes them in the same
//          order).
//   Redis  Redisson's RedissonMultiLock: lock() tries each lock in turn,
//          waiting on each within the attempt's time, and on a failure
//          unlocks those it took.
//
// The callers (multi_cycle, kinds_workloads.h) pass the names sorted, so two
// clients never hold parts of each other's sets while waiting in a cycle.
//
// Thread safety: as the driver's (none).
#ifndef FENCEGATE_BENCH_LOADGEN_ACQUIRE_IN_ORDER_H_
#define FENCEGATE_BENCH_LOADGEN_ACQUIRE_IN_ORDER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/loadgen/driver.h"

namespace fencegate::bench {

// nullopt: some lock was not granted (the others were released). An error:
// an Acquire or a clean-up Release failed.
absl::StatusOr<std::optional<std::vector<HeldLock>>> AcquireEachInOrder(
    Driver& driver, const std::vector<std::string>& resources,
    const AcquireOptions& options);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ACQUIRE_IN_ORDER_H_
