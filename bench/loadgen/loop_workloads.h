// The event-loop shape of the benchmark's workloads (--shape=loop): the
// same operations and the same window as workloads.h, but the clients are
// closed loops run inside their completion callbacks on the driver's event
// thread(s) (loop_driver.h), not a thread each. Workloads:
//
//   fenced_write  as workloads.h: leases taken before the clock (by the
//                 thread-shaped driver of the same system), then one 1 KiB
//                 write per op, client c's k-th on resource
//                 (c + k * clients) % resources under key "k<c>".
//   lock_cycle    a try-lock and its release, on many resources (a refusal
//                 is a completed op, counted in not_acquired).
//   handoff       as workloads.h: every client on one hot resource, a
//                 waiting acquire (the driver's: fencegate's FIFO queue,
//                 Redis' retries on a timer), one fenced write under the
//                 grant's token, its release; the wait, the changes of
//                 holder, and mutual exclusion checked as there.
//   rpc           the echo of value_bytes bytes (echo_loop.h).
//
// A client whose op fails stops (its error is counted; the run then exits
// 1, as any run with failures).
//
// Thread safety: RunLoopWorkload() is called from one thread.
#ifndef FENCEGATE_BENCH_LOADGEN_LOOP_WORKLOADS_H_
#define FENCEGATE_BENCH_LOADGEN_LOOP_WORKLOADS_H_

#include <string>

#include "absl/status/statusor.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/loop_driver.h"
#include "bench/loadgen/run_stats.h"
#include "bench/loadgen/workloads.h"

namespace fencegate::bench {

// `setup` makes the thread-shaped drivers that take fenced_write's leases
// (null for workloads without them).
absl::StatusOr<RunSummary> RunLoopWorkload(const RunConfig& config,
                                           const DriverFactory& setup, LoopDriver& loop,
                                           std::string* first_error);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_LOOP_WORKLOADS_H_
