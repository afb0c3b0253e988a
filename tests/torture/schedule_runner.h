// RunSchedule: one torture run, start to verdict.
//
//   1. start the test builds of the lock service and the gateway(s) (under
//      libfaketime; and PostgreSQL if the topology has it) and the workers,
//      in a fresh run directory;
//   2. deliver the schedule's faults while the workers run (FaultInjector);
//   3. heal everything: SIGCONT every process, disarm failpoints, clocks
//      back to real time, restart what is down; let the workers finish
//      their rounds and exit;
//   4. kill -9 every server one last time (etcd members included) and
//      restart them, so every acknowledged write must survive a crash; on a
//      secure schedule wait until the gateways caught up with the fence
//      feed; then read the final state (through the first gateway: they
//      share their data);
//   5. stop the servers with SIGTERM (they must exit cleanly), load the
//      histories and check them (history_checker.h).
//
// The run directory keeps every database, log, history and the fault log;
// it is removed when the run passes, unless asked to keep it.
//
// Thread safety: RunSchedule() may run in one thread at a time per work
// directory.
#ifndef FENCEGATE_TESTS_TORTURE_SCHEDULE_RUNNER_H_
#define FENCEGATE_TESTS_TORTURE_SCHEDULE_RUNNER_H_

#include <string>
#include <vector>

#include "harness/network_namespaces.h"
#include "tests/torture/fault_tally.h"
#include "tests/torture/history_checker.h"
#include "tests/torture/schedule.h"

namespace fencegate::torture {

struct RunOptions {
  std::string lockservice_binary;  // fencegate-lockservice-torture
  std::string gateway_binary;      // fencegate-gateway-torture (each gateway)
  std::string worker_binary;       // fencegate-torture-worker
  std::string faketime_library;    // libfaketime.so.1
  std::string work_dir;            // the run directory is made inside
  bool keep_run_dir = false;       // also when the run passes
  // How long a fault waits for its moment before it counts as undelivered
  // (Topology::reach_timeout, unless --reach_timeout says otherwise).
  // Long: servers may be down or stopped meanwhile, and the machine busy.
  absl::Duration reach_timeout = absl::Seconds(30);
  // The network a replicated topology runs in (its hosts are
  // NetworkHostNames(), cluster.h); the calling thread must be in its
  // harness host. Null for the other topologies.
  testing::VirtualNetwork* network = nullptr;
};

struct RunResult {
  std::string run_dir;
  FaultTally faults;
  CheckResult check;
  // What kept the run from being judged fully: a server that would not
  // start or did not shut down cleanly, a worker that crashed, final reads
  // that failed.
  std::vector<std::string> errors;

  // No violation, every promised fault delivered, no error.
  bool passed() const {
    return check.ok() && errors.empty() && faults.undelivered.empty() &&
           faults.errors.empty();
  }
};

RunResult RunSchedule(const Schedule& schedule, const RunOptions& options);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_SCHEDULE_RUNNER_H_
