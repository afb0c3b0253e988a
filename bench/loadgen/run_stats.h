// What one measured run records and the numbers reported from it.
//
// Latencies are kept as every single sample (no bucketing, no averaging):
// at the rates measured here a run has at most a few hundred thousand
// samples, so sorting them gives exact percentiles.
//
// Thread safety: a ClientTally belongs to one client thread; Summarize()
// runs after those threads have joined.
#ifndef FENCEGATE_BENCH_LOADGEN_RUN_STATS_H_
#define FENCEGATE_BENCH_LOADGEN_RUN_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace fencegate::bench {

// One client thread's record of the measured window.
struct ClientTally {
  std::vector<int64_t> latency_ns;  // one per completed op
  std::vector<int64_t> wait_ns;     // handoff, rw_mix's writers: asking to being granted
  int64_t errors = 0;
  int64_t not_acquired = 0;  // try-locks refused (completed ops, in latency_ns too)
  int64_t abandoned = 0;     // waits started in the window and cut off by its end (not ops)
  int64_t holder_changes = 0;  // handoff: grants whose previous holder was another client
  int64_t writes =
      0;  // rw_mix: the exclusive cycles among the ops (their waits in wait_ns)
};

struct RunSummary {
  int64_t ops = 0;
  int64_t errors = 0;
  int64_t not_acquired = 0;
  int64_t abandoned = 0;
  double ops_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  // handoff only (0 otherwise, but see writes_per_s): grants that moved the lock to
  // another client, per second, and the waiting times.
  double holder_changes_per_s = 0;
  // rw_mix only (0 otherwise): exclusive cycles per second; the wait
  // percentiles are then those of the exclusive acquires.
  double writes_per_s = 0;
  double wait_p50_us = 0;
  double wait_p99_us = 0;
  double wait_max_us = 0;
  // Completed ops per client: the spread, and Jain's fairness index
  // (sum x)^2 / (n * sum x^2): 1 = every client got the same share.
  int64_t client_ops_min = 0;
  int64_t client_ops_max = 0;
  double jain_fairness = 0;
  // CPU inside the window, per completed op: the load generator's own and
  // the servers' (0 when their PIDs were not given); and the share of the
  // machine used by other processes (someone else's work).
  double client_cpu_us_per_op = 0;
  double server_cpu_us_per_op = 0;
  double other_cpu_share = 0;
  // Context switches inside the window per completed op (cpu_usage.h):
  // the load generator's and the servers'.
  double client_switches_per_op = 0;
  double server_switches_per_op = 0;
};

// Merges the tallies (consuming their samples) over a window of `measured`.
RunSummary Summarize(std::vector<ClientTally>& tallies, absl::Duration measured);

// Nearest-rank percentile (p in [0, 1]) of sorted samples, in microseconds.
double PercentileUs(const std::vector<int64_t>& sorted_ns, double p);

// What the JSON line says the run was.
struct RunLabels {
  std::string system;
  std::string durability;
  std::string workload;
  int resources = 0;
  int clients = 0;
  double duration_s = 0;
};

// One line of JSON: the labels and the summary, flat.
std::string ToJsonLine(const RunLabels& labels, const RunSummary& summary);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_RUN_STATS_H_
