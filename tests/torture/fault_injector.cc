#include "tests/torture/fault_injector.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace fencegate::torture {
namespace {

// Time a target runs normally between two of its faults: a server killed
// again the moment it is back, or a worker stopped again before it made any
// progress, tells nothing new.
constexpr absl::Duration kServerSettle = absl::Milliseconds(1500);
constexpr absl::Duration kWorkerSettle = absl::Seconds(1);

}  // namespace

FaultInjector::FaultInjector(const Schedule& schedule, Cluster* cluster,
                             std::vector<WorkerProcess*> workers,
                             const std::string& log_path, HistoryWriter* history,
                             absl::Duration reach_timeout)
    : schedule_(schedule),
      cluster_(cluster),
      gateways_(cluster->gateways()),
      workers_(std::move(workers)),
      history_(history),
      reach_timeout_(reach_timeout) {
  absl::MutexLock lock(&mu_);
  tally_.promised = PromisedFaults(schedule);
  log_ = fopen(log_path.c_str(), "a");
}

FaultInjector::~FaultInjector() {
  absl::MutexLock lock(&mu_);
  if (log_ != nullptr) fclose(log_);
}

void FaultInjector::Run(absl::Time start) {
  start_ = start;
  std::vector<const Fault*> lock_faults;
  std::vector<const Fault*> etcd_faults;
  std::vector<std::vector<const Fault*>> gateway_faults(gateways_.size());
  std::vector<std::vector<const Fault*>> worker_faults(workers_.size());
  for (const Fault& fault : schedule_.faults) {
    switch (fault.target) {
      case Target::kLockService:
        lock_faults.push_back(&fault);
        break;
      case Target::kGateway:
        gateway_faults[fault.gateway].push_back(&fault);
        break;
      case Target::kWorker:
        worker_faults[fault.worker].push_back(&fault);
        break;
      case Target::kEtcd:
        etcd_faults.push_back(&fault);
        break;
    }
  }
  std::vector<std::thread> timelines;
  timelines.emplace_back([&] { RunTimeline(lock_faults, start); });
  timelines.emplace_back([&] { RunTimeline(etcd_faults, start); });
  for (const auto& faults : gateway_faults) {
    timelines.emplace_back([&] { RunTimeline(faults, start); });
  }
  for (const auto& faults : worker_faults) {
    timelines.emplace_back([&] { RunTimeline(faults, start); });
  }
  for (std::thread& t : timelines) t.join();
  for (ServerNode* lockservice : cluster_->lockservices()) CheckServer(*lockservice);
  for (ServerNode* gateway : gateways_) CheckServer(*gateway);
}

FaultTally FaultInjector::tally() {
  absl::MutexLock lock(&mu_);
  return tally_;
}

void FaultInjector::RunTimeline(const std::vector<const Fault*>& faults, absl::Time start) {
  absl::Time ready = start;
  for (const Fault* fault : faults) {
    absl::SleepFor(std::max(start + fault->at, ready) - absl::Now());
    Deliver(*fault);
    ready = absl::Now() + (fault->target == Target::kWorker ? kWorkerSettle : kServerSettle);
  }
}

std::vector<ServerNode*> FaultInjector::ServersActedOn(const Fault& fault,
                                                       ServerNode* server) {
  // A race stalls every gateway; a cut of the fence feed cuts them all.
  if (fault.kind == FaultKind::kStaleWriterRace ||
      fault.partition == Partition::kGatewaysFromLockService) {
    return gateways_;
  }
  // A failpoint aimed at the leader is armed on every lock-service
  // instance (the leader may change while it waits): such a fault holds
  // them all, so that two of them (a crash at a failpoint, the pause's
  // stall) never overwrite each other's arming (found in CI: a pause and a
  // crash overlapped, and one of them could not be delivered).
  if (fault.role == Role::kLeader && (fault.kind == FaultKind::kFailpointCrash ||
                                      fault.kind == FaultKind::kPauseLeaderPastTtl)) {
    return cluster_->lockservices();
  }
  if (server == nullptr) return {};
  return {server};
}

absl::StatusOr<ServerNode*> FaultInjector::Resolve(const Fault& fault) {
  if (fault.target == Target::kGateway) return gateways_[std::max(fault.gateway, 0)];
  if (fault.target != Target::kLockService) return nullptr;
  if (fault.role == Role::kOnly) return &cluster_->lockservice(0);
  absl::StatusOr<int> leader = cluster_->LockServiceLeader(reach_timeout_);
  if (!leader.ok()) return leader.status();
  const int instances = static_cast<int>(cluster_->lockservices().size());
  const int index = fault.role == Role::kLeader ? *leader : (*leader + 1) % instances;
  return &cluster_->lockservice(index);
}

void FaultInjector::Deliver(const Fault& fault) {
  std::string what = DescribeFault(schedule_, fault);
  absl::StatusOr<ServerNode*> server = Resolve(fault);
  if (server.ok() && *server != nullptr && fault.role != Role::kOnly) {
    absl::StrAppend(&what, " [", (*server)->name(), "]");
  }
  // Faults on one server do not overlap: each holds the episode of every
  // server it acts on. Only a race and a cut of the fence feed (the
  // gateways) and a leader-aimed failpoint (the lock-service instances)
  // hold several, each set in index order, and none holds servers of both
  // sets, so no two faults can wait for each other in a cycle.
  std::vector<std::unique_ptr<absl::MutexLock>> episodes;
  for (ServerNode* s : ServersActedOn(fault, server.ok() ? *server : nullptr)) {
    episodes.push_back(std::make_unique<absl::MutexLock>(&s->episode_mu));
  }
  std::string missed;
  if (!server.ok()) {
    missed = server.status().ToString();
  } else {
    missed = DeliverTo(fault, *server);
  }
  episodes.clear();
  if (server.ok() && *server != nullptr) CheckServer(**server);
  absl::MutexLock lock(&mu_);
  if (missed.empty()) {
    ++tally_.delivered;
  } else {
    tally_.undelivered.push_back(absl::StrCat(what, ": ", missed));
  }
  if (log_ != nullptr) {
    absl::FPrintF(log_, "[done %+.3fs] %s%s\n", absl::ToDoubleSeconds(absl::Now() - start_),
                  what, missed.empty() ? "" : absl::StrCat(" -- NOT DELIVERED: ", missed));
    fflush(log_);
  }
}

std::string FaultInjector::DeliverTo(const Fault& fault, ServerNode* server) {
  switch (fault.kind) {
    case FaultKind::kPauseHolder:
      return PauseHolder(fault);
    case FaultKind::kKillHolder:
      return KillHolder(fault);
    case FaultKind::kPauseBeforeWrite:
      return PauseBeforeWrite(fault);
    case FaultKind::kStaleWriterRace:
      return StaleWriterRace(fault);
    case FaultKind::kPartition:
      return Cut(fault, server);
    case FaultKind::kQuorumLoss:
      return QuorumLoss(fault);
    default:
      break;
  }
  if (fault.target == Target::kEtcd) return EtcdFault(fault);
  switch (fault.kind) {
    case FaultKind::kKillRestart:
      return KillRestart(fault, *server);
    case FaultKind::kStopServer:
      return StopServer(fault, *server);
    case FaultKind::kFailpointCrash:
      return FailpointCrash(fault, *server);
    case FaultKind::kClockJump:
      return ClockJump(fault, *server);
    case FaultKind::kDiskFull:
      return DiskFull(fault, *server);
    case FaultKind::kFsyncFailure:
    case FaultKind::kWriteFailure:
      return DiskIoError(fault, *server);
    case FaultKind::kPauseLeaderPastTtl:
      return PauseLeaderPastTtl(fault, *server);
    default:
      return "not a fault of a server";
  }
}

void FaultInjector::CheckServer(ServerNode& server) {
  std::string exit = server.UnexpectedExit();
  if (exit.empty()) return;
  Error(absl::StrCat("the ", server.name(), " exited by itself: ", exit));
  absl::Status restarted = server.Start();
  if (!restarted.ok()) Error(absl::StrCat("restarting it failed: ", restarted.ToString()));
}

void FaultInjector::Count(int FaultTally::*counter, int by) {
  absl::MutexLock lock(&mu_);
  tally_.*counter += by;
}

void FaultInjector::Error(std::string error) {
  Log(absl::StrCat("ERROR ", error));
  absl::MutexLock lock(&mu_);
  tally_.errors.push_back(std::move(error));
}

void FaultInjector::Log(const std::string& line) {
  absl::MutexLock lock(&mu_);
  if (log_ == nullptr) return;
  absl::FPrintF(log_, "[%+.3fs] %s\n", absl::ToDoubleSeconds(absl::Now() - start_), line);
  fflush(log_);
}

}  // namespace fencegate::torture
