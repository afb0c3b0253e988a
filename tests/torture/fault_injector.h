// FaultInjector: delivers a Schedule's faults to the running servers and
// workers, and counts what it delivered.
//
// Each target (the lock service, each gateway, each worker) has a timeline,
// run by its own thread: its faults one after the other, each starting at
// its offset or as soon as the target has run normally for a moment after
// the fault before it. So faults on different
// targets overlap (a paused holder while a gateway restarts), faults on
// one target never do. A stale-writer race runs on its gateway's timeline,
// stalls every gateway's commits, and takes a worker of its gateway for as
// long as it acts on them (the episode_mu of each ServerNode and
// WorkerProcess): the worker the schedule names, or the next one of that
// gateway not busy with a fault of its own.
//
// A fault that could not be delivered (a worker that never reached its
// write, a failpoint no commit reached) is listed in undelivered, and the
// run fails: a schedule that promised faults must deliver them. A server
// that exits on its own (not killed, not at an armed failpoint) is an error,
// and is restarted so the run can finish.
//
// Thread safety: Run() once, from one thread; tally() after it returned.
#ifndef FENCEGATE_TESTS_TORTURE_FAULT_INJECTOR_H_
#define FENCEGATE_TESTS_TORTURE_FAULT_INJECTOR_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/torture/schedule.h"
#include "tests/torture/server_node.h"
#include "tests/torture/worker_process.h"

namespace fencegate::torture {

struct FaultTally {
  int promised = 0;
  int delivered = 0;
  int pauses = 0;               // of lock holders, races included
  int pauses_past_ttl = 0;      // longer than the lease's TTL
  int pauses_before_write = 0;  // at the worst moment, races included
  int stale_writer_races = 0;
  int races_with_rival = 0;     // the successor's fenced read was waiting too
  int races_across_gateways = 0;  // ... sent to another gateway than the stale write
  int kills = 0;                // kill -9 and restart
  int server_stops = 0;
  int failpoint_crashes = 0;
  int clock_jumps = 0;
  std::vector<std::string> undelivered;
  std::vector<std::string> errors;
};

class FaultInjector {
 public:
  // `log_path`: one line per fault, as it is delivered. `reach_timeout`:
  // how long a fault waits for its moment (a worker reaching its write, a
  // commit reaching a failpoint) before it counts as undelivered.
  // Worker i talks to gateways[i % gateways.size()].
  FaultInjector(const Schedule& schedule, ServerNode* lockservice,
                std::vector<ServerNode*> gateways, std::vector<WorkerProcess*> workers,
                const std::string& log_path, absl::Duration reach_timeout);
  ~FaultInjector();

  // Delivers every fault, timed from `start`; returns when all are done.
  void Run(absl::Time start);
  FaultTally tally();

 private:
  void RunTimeline(const std::vector<const Fault*>& faults, absl::Time start);
  void Deliver(const Fault& fault);
  // The server a server fault targets.
  ServerNode& Server(const Fault& fault);
  // The servers whose episode `fault` holds while it is delivered.
  std::vector<ServerNode*> ServersActedOn(const Fault& fault);

  // Worker faults (fault_injector_workers.cc). Each returns "" when
  // delivered, or why not.
  std::string PauseHolder(const Fault& fault);
  std::string PauseBeforeWrite(const Fault& fault);
  std::string StaleWriterRace(const Fault& fault);
  struct Probe;
  // A lease on a resource of the harness's own (one per gateway), and a
  // client of `gateway`; or null (lock service down).
  std::unique_ptr<Probe> AcquireProbe(int gateway);
  // Releases the lease `token` holds on `resource`, as an operator would.
  void ReleaseAsOperator(const std::string& resource, uint64_t token);
  // Asks `worker` to stop itself before its next write; waits until it has.
  std::string StopBeforeWrite(WorkerProcess& worker);
  // The first worker from `first` on, of the same gateway, that no other
  // fault acts on now (or `first` if all are busy).
  WorkerProcess& FreeWorker(int first);
  // Server faults (fault_injector_servers.cc).
  std::string KillRestart(const Fault& fault);
  std::string StopServer(const Fault& fault);
  std::string FailpointCrash(const Fault& fault);
  std::string ClockJump(const Fault& fault);
  // Restarts `server` if it exited on its own, and records that as an error.
  void CheckServer(ServerNode& server);

  void Count(int FaultTally::*counter, int by = 1);
  void Error(std::string error);
  void Log(const std::string& line);

  const Schedule& schedule_;
  ServerNode* const lockservice_;
  const std::vector<ServerNode*> gateways_;
  const std::vector<WorkerProcess*> workers_;
  const absl::Duration reach_timeout_;
  absl::Time start_;

  absl::Mutex mu_;
  FaultTally tally_ ABSL_GUARDED_BY(mu_);
  FILE* log_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FAULT_INJECTOR_H_
