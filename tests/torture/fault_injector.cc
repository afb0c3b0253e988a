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

FaultInjector::FaultInjector(const Schedule& schedule, ServerNode* lockservice,
                             std::vector<ServerNode*> gateways,
                             std::vector<WorkerProcess*> workers, const std::string& log_path,
                             absl::Duration reach_timeout)
    : schedule_(schedule),
      lockservice_(lockservice),
      gateways_(std::move(gateways)),
      workers_(std::move(workers)),
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
    }
  }
  std::vector<std::thread> timelines;
  timelines.emplace_back([&] { RunTimeline(lock_faults, start); });
  for (const auto& faults : gateway_faults) {
    timelines.emplace_back([&] { RunTimeline(faults, start); });
  }
  for (const auto& faults : worker_faults) {
    timelines.emplace_back([&] { RunTimeline(faults, start); });
  }
  for (std::thread& t : timelines) t.join();
  CheckServer(*lockservice_);
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

std::vector<ServerNode*> FaultInjector::ServersActedOn(const Fault& fault) {
  if (fault.kind == FaultKind::kStaleWriterRace) return gateways_;  // it stalls them all
  if (fault.target == Target::kWorker) return {};
  return {&Server(fault)};
}

void FaultInjector::Deliver(const Fault& fault) {
  const std::string what = DescribeFault(schedule_, fault);
  // Faults on one server do not overlap: each holds the episode of every
  // server it acts on. Only a race holds several (the gateways, by index),
  // so no two faults can wait for each other in a cycle.
  std::vector<std::unique_ptr<absl::MutexLock>> episodes;
  for (ServerNode* server : ServersActedOn(fault)) {
    episodes.push_back(std::make_unique<absl::MutexLock>(&server->episode_mu));
  }
  std::string missed;
  switch (fault.kind) {
    case FaultKind::kPauseHolder:
      missed = PauseHolder(fault);
      break;
    case FaultKind::kPauseBeforeWrite:
      missed = PauseBeforeWrite(fault);
      break;
    case FaultKind::kStaleWriterRace:
      missed = StaleWriterRace(fault);
      break;
    case FaultKind::kKillRestart:
      missed = KillRestart(fault);
      break;
    case FaultKind::kStopServer:
      missed = StopServer(fault);
      break;
    case FaultKind::kFailpointCrash:
      missed = FailpointCrash(fault);
      break;
    case FaultKind::kClockJump:
      missed = ClockJump(fault);
      break;
  }
  episodes.clear();
  if (fault.target != Target::kWorker) CheckServer(Server(fault));
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

ServerNode& FaultInjector::Server(const Fault& fault) {
  return fault.target == Target::kLockService ? *lockservice_ : *gateways_[fault.gateway];
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
