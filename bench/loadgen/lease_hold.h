// The lease_hold workload (issue 32 item 2's row): one client of the C++
// client library holding `leases` Leases (TTL lock_ttl, 10 s by default)
// for `duration`, renewed by the library itself. It reports how many
// threads the process gained for them (the most seen, sampled every
// second, over the count before the first Acquire) and how many leases
// were lost: the renewal scheduler's promise is a handful of threads and
// none lost, where a thread per Lease would add `leases` threads.
//
//   fencegate-loadgen --system=fencegate-stream --target=127.0.0.1:7070
//       --workload=lease_hold --resources=10000 --duration=5m
//
// Prints one JSON line: {"system", "workload": "lease_hold", "leases",
// "ttl_s", "held_s", "lost", "threads_before", "threads_max",
// "threads_added", "client_cpu_us_per_renewal", "server_cpu_us_per_renewal"}.
// The renewal counts are estimated as leases x held / (ttl / 3).
//
// Thread safety: RunLeaseHold() is called from one thread.
#ifndef FENCEGATE_BENCH_LOADGEN_LEASE_HOLD_H_
#define FENCEGATE_BENCH_LOADGEN_LEASE_HOLD_H_

#include <string>

#include "absl/status/statusor.h"
#include "bench/loadgen/workloads.h"

namespace fencegate::bench {

// The JSON line, or why the run could not be set up. `config.resources`
// is the number of leases.
absl::StatusOr<std::string> RunLeaseHold(const RunConfig& config,
                                         const std::string& lock_target);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_LEASE_HOLD_H_
