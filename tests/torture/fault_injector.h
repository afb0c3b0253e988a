// FaultInjector: delivers a Schedule's faults to the running servers and
// workers, and counts what it delivered.
//
// Each target (the lock service, etcd, each gateway, each worker) has a
// timeline, run by its own thread: its faults one after the other, each
// starting at its offset or as soon as the target has run normally for a
// moment after the fault before it. So faults on different targets overlap
// (a paused holder while a gateway restarts, an etcd member down while the
// lock-service leader is cut off), faults on one target never do. A
// stale-writer race runs on its gateway's timeline, stalls every gateway's
// commits, and takes a worker of its gateway for as long as it acts on
// them (the episode_mu of each ServerNode and WorkerProcess): the worker
// the schedule names, or the next one of that gateway not busy with a
// fault of its own.
//
// On a replicated topology a fault's Role is resolved when it is
// delivered: the lock-service instance the leader key names, or the next
// instance after it (a standby); the member every etcd member names as
// leader, or the next one (a follower). Partitions go through the
// cluster's NetworkCuts, so overlapping ones may share links.
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

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/client/client_options.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/token_signature.h"
#include "tests/torture/cluster.h"
#include "tests/torture/fault_tally.h"
#include "tests/torture/history_log.h"
#include "tests/torture/schedule.h"
#include "tests/torture/server_node.h"
#include "tests/torture/worker_process.h"

namespace fencegate::torture {

// The resource of the fence-feed cut's probe lease (no worker uses it).
std::string FenceProbeResource();

class FaultInjector {
 public:
  // `log_path`: one line per fault, as it is delivered. `reach_timeout`:
  // how long a fault waits for its moment (a worker reaching its write, a
  // commit reaching a failpoint) before it counts as undelivered.
  // Worker i talks to gateways[i % gateways.size()]. The harness's own
  // lock-service calls that belong in the history (the fence-feed cut's
  // probe lease) are written to `history`.
  FaultInjector(const Schedule& schedule, Cluster* cluster,
                std::vector<WorkerProcess*> workers, const std::string& log_path,
                HistoryWriter* history, absl::Duration reach_timeout);
  ~FaultInjector();

  // Delivers every fault, timed from `start`; returns when all are done.
  void Run(absl::Time start);
  FaultTally tally();

 private:
  void RunTimeline(const std::vector<const Fault*>& faults, absl::Time start);
  void Deliver(const Fault& fault);
  // Delivers `fault` to `server` (null for faults on workers, etcd or the
  // network); "" when delivered, or why not.
  std::string DeliverTo(const Fault& fault, ServerNode* server);
  // The server a fault on a lock service or a gateway targets, its role
  // resolved now; or why there is none.
  absl::StatusOr<ServerNode*> Resolve(const Fault& fault);
  // The servers whose episode `fault` holds while it is delivered.
  std::vector<ServerNode*> ServersActedOn(const Fault& fault, ServerNode* server);

  // Worker faults (fault_injector_workers.cc). Each returns "" when
  // delivered, or why not.
  std::string PauseHolder(const Fault& fault);
  // kill -9 a worker while it holds a lease, then WorkerProcess::Restart.
  std::string KillHolder(const Fault& fault);
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
  std::string KillRestart(const Fault& fault, ServerNode& server);
  std::string StopServer(const Fault& fault, ServerNode& server);
  std::string FailpointCrash(const Fault& fault, ServerNode& server);
  std::string ClockJump(const Fault& fault, ServerNode& server);
  // kDiskFull; kFsyncFailure and kWriteFailure (fault_injector_disks.cc).
  std::string DiskFull(const Fault& fault, ServerNode& server);
  std::string DiskIoError(const Fault& fault, ServerNode& server);
  // Restarts `server` after a kill or an exit; a restart under the
  // disk-fault preload is a power cut too (counted).
  void Restart(ServerNode& server);
  // The replicated topology's (fault_injector_replicated.cc).
  // Stops the leader while the commit of a probe lease's grant is in
  // flight, until another instance leads and has granted the same
  // resource; resumes it, and records what it answered the probe.
  std::string PauseLeaderPastTtl(const Fault& fault, ServerNode& leader);
  // A lease of the harness's own, in the history, from a client of its own.
  struct HarnessLease {
    std::unique_ptr<client::LockClient> client;
    std::string resource;
    uint64_t token = 0;
    TokenSignature signature;
  };
  // Acquires `resource` through `target` (waits up to 5 s); FAILED_PRECONDITION
  // if not acquired, or the call's error.
  absl::StatusOr<HarnessLease> HarnessAcquire(const std::string& target,
                                              const std::string& resource,
                                              absl::Duration ttl,
                                              const client::ClientOptions& options);
  void HarnessRelease(const HarnessLease& lease);
  std::string EtcdFault(const Fault& fault);
  std::string QuorumLoss(const Fault& fault);
  std::string Cut(const Fault& fault, ServerNode* server);
  // The hosts of a partition's two sides; or why they could not be named.
  absl::Status PartitionSides(const Fault& fault, ServerNode* server,
                              std::vector<std::string>* a, std::vector<std::string>* b,
                              std::string* what);
  // The etcd member `role` names now; or why there is none.
  absl::StatusOr<int> EtcdMember(Role role);
  // Holds the fence-feed cut until every gateway logged that its stream
  // ended; acquires and releases the probe lease meanwhile.
  std::string FenceFeedCut(const Fault& fault);
  // A worker that holds a lease, cut from the lock service for a while.
  std::string WorkerCut(const Fault& fault);
  // Restarts `server` if it exited on its own, and records that as an error.
  void CheckServer(ServerNode& server);

  void Count(int FaultTally::*counter, int by = 1);
  void Error(std::string error);
  void Log(const std::string& line);

  const Schedule& schedule_;
  Cluster* const cluster_;
  const std::vector<ServerNode*> gateways_;
  const std::vector<WorkerProcess*> workers_;
  HistoryWriter* const history_;
  const absl::Duration reach_timeout_;
  absl::Time start_;
  std::atomic<int> pause_probes_{0};  // PauseLeaderPastTtl's probes so far

  absl::Mutex mu_;
  FaultTally tally_ ABSL_GUARDED_BY(mu_);
  FILE* log_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FAULT_INJECTOR_H_
