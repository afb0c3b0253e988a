// The benchmark's workloads, written once against Driver so every system
// runs the same closed loop: each client thread has its own driver (its own
// connection), issues one operation, waits for the answer, records the
// latency, and issues the next, until the run's end. An operation is
// recorded if it completes inside the measured window (after the warm-up,
// before the end): throughput is completions per second of the window.
// Failed operations are counted wherever they happen, warm-up included.
//
//   lock_cycle    acquire (TTL 10 s) then owner-checked release; one op =
//                 both. On 1 resource (hot) acquire waits its turn; on many
//                 it is a try-lock (a refusal is a completed op, counted in
//                 not_acquired).
//   fenced_write  before the clock starts, setup threads take a lease (TTL
//                 60 s) on every resource; then each op is one 1 KiB write
//                 fenced by that lease's token. Client c writes key "k<c>".
//                 On 1 resource every client writes under the same lease.
//   handoff       one hot resource: acquire (waiting in line), one fenced
//                 write, release. ops_per_s is these cycles per second;
//                 holder_changes counts the cycles whose lock came from
//                 another client (a real hand-off: a lock that lets its
//                 releaser barge back in does fewer); the waiting times and
//                 per-client counts show fairness.
//   pipelined_write  fenced_write's leases and writes, but each client keeps
//                 `depth` writes in flight on its one connection (a new one
//                 as each answer comes: Driver::PipelinedWrites), so one
//                 client can keep the disk busy. Latency: from a write's
//                 send to its answer.
//   shared_cycle, rw_mix, multi_cycle
//                 the lock kinds: shared leases, readers and writers, four
//                 resources at once (kinds_workloads.h).
//   rpc           an empty call (grpc-empty only): the ceiling.
//   hold          state, not speed (./scripts/bench --scale): the clients
//                 take a lease (TTL hold_ttl) on every resource, one
//                 try-lock each (Redis: its cheapest lock, SET NX PX with
//                 no token), and leave them held when the run ends (the
//                 server keeps them until their TTL); ops_per_s is leases
//                 taken per second, duration and warm-up do not apply.
//   fill          state of the gateway (./scripts/bench --scale): one key
//                 ("k", value_bytes) written on every resource, fenced by
//                 token 1 (a gateway with no lock service takes any token
//                 at or above the resource's fence, which starts at 0), so
//                 the gateway knows `resources` resources after the run.
//                 Each client writes its share (resource c, c + clients,
//                 ...) over the gateway's Session stream, `depth` writes
//                 in flight (Driver::PipelinedWrites); ops_per_s is writes
//                 per second, duration and warm-up do not apply.
//   park          (park_waiters.h) waiters parked on held resources, kept
//                 parked until stdin closes: fencegate's lock service only.
//
// On the hot resource every workload also checks mutual exclusion from the
// clients' side: a grant while another client still holds the lock is a
// failed operation ("mutual exclusion violated").
//
// Resource i of a run is "<run_id>-r<i>", so runs never see each other's
// locks. Client c's k-th op uses resource (c + k * clients) % resources.
//
// Thread safety: RunWorkload() is called from one thread and starts its own.
#ifndef FENCEGATE_BENCH_LOADGEN_WORKLOADS_H_
#define FENCEGATE_BENCH_LOADGEN_WORKLOADS_H_

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/loadgen/cpu_usage.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/run_stats.h"

namespace fencegate::bench {

enum class Workload {
  kLockCycle,
  kFencedWrite,
  kPipelinedWrite,
  kHandoff,
  kSharedCycle,
  kRwMix,
  kMultiCycle,
  kRpc,
  kHold,
  kFill,
  kPark,       // not run by RunWorkload (park_waiters.h)
  kLeaseHold,  // not run by RunWorkload (lease_hold.h)
};

absl::StatusOr<Workload> ParseWorkload(absl::string_view name);

struct RunConfig {
  Workload workload = Workload::kLockCycle;
  int clients = 1;
  int resources = 1000;
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration duration = absl::Seconds(5);
  size_t value_bytes = 1024;
  std::string run_id = "run";
  absl::Duration lock_ttl = absl::Seconds(10);  // lock_cycle, handoff, the kinds
  absl::Duration hold_ttl = absl::Seconds(60);  // fenced_write's setup leases; hold's
  int depth = 32;  // pipelined_write: writes in flight per client
  int setup_threads = 16;
  // The servers under test, for the CPU figures of the summary (optional).
  std::vector<pid_t> server_pids;
};

// Resource `index` of the run: "<run_id>-r<index>".
std::string ResourceName(const RunConfig& config, int index);

// Counts a client in as a holder of the hot resource (`holders`, shared by
// the run's clients; the caller counts it out before releasing): an error
// if another client is in already, the system having broken mutual
// exclusion. The waiting workloads of both shapes check it on each grant.
absl::Status EnterExclusive(std::atomic<int>& holders);

// Fills the summary's CPU and context-switch figures from the snapshots
// taken at the measured window's ends (the servers' only when their PIDs
// were given).
void AddCpu(const RunConfig& config, const CpuSnapshot& start, const CpuSnapshot& end,
            RunSummary& summary);

// Checks the config's bounds; INVALID_ARGUMENT naming the field otherwise.
absl::Status ValidateRunConfig(const RunConfig& config);

// Runs one measured run. Failed operations are counted in the summary (with
// the first one's message in *first_error); an error status means the run
// could not be set up (connect, setup leases) and measured nothing.
absl::StatusOr<RunSummary> RunWorkload(const RunConfig& config,
                                       const DriverFactory& make_driver,
                                       std::string* first_error);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_WORKLOADS_H_
