// CPU time snapshots, to say where a run's CPU went: this process (the load
// generator), the servers under test (by PID), and everything else on the
// machine. On a machine whose cores are shared by clients and servers, CPU
// per operation is what throughput is made of, and "everything else" says
// whether other work (someone compiling) disturbed the run.
//
// Thread safety: free functions; reads /proc and getrusage only.
#ifndef FENCEGATE_BENCH_LOADGEN_CPU_USAGE_H_
#define FENCEGATE_BENCH_LOADGEN_CPU_USAGE_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace fencegate::bench {

struct CpuSnapshot {
  absl::Duration self;     // this process, all threads (user + system)
  absl::Duration servers;  // the given PIDs, user + system (10 ms ticks)
  // Context switches, voluntary and not: this process' (all its threads,
  // getrusage), and the servers' (the threads alive at the snapshot,
  // /proc/PID/task/*/status: a thread that ended between two snapshots
  // takes its count with it, so pools that come and go are undercounted).
  int64_t self_switches = 0;
  int64_t server_switches = 0;
  absl::Duration machine_busy;   // all cores, not idle
  absl::Duration machine_total;  // all cores
};

// A PID that is gone or unreadable counts as zero.
CpuSnapshot TakeCpuSnapshot(const std::vector<pid_t>& servers);

struct CpuShares {
  double self_us_per_op = 0;
  double servers_us_per_op = 0;
  double self_switches_per_op = 0;
  double server_switches_per_op = 0;
  // Share of the machine's CPU (0..1) used by neither this process nor the
  // servers between the snapshots.
  double others = 0;
};

CpuShares CpuBetween(const CpuSnapshot& before, const CpuSnapshot& after,
                     int64_t ops);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_CPU_USAGE_H_
