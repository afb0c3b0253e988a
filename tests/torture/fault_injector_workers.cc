// FaultInjector's faults on workers: pauses of lock holders, and the
// stale-writer race (see fault_injector.h, schedule.h).
#include <signal.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "tests/torture/fault_injector.h"

namespace fencegate::torture {
namespace {

// Margin for a call a worker has just started to reach the gateway.
constexpr absl::Duration kInFlight = absl::Milliseconds(150);
// A resource no worker uses, one per gateway: the race's probe write
// stalls a commit there.
std::string ProbeResource(int gateway) { return absl::StrCat("torture-probe-", gateway); }

// Polls `condition` every 2 ms until it holds or `timeout` passes.
template <typename Condition>
bool WaitFor(Condition condition, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(2));  // poll interval, under a deadline
  }
  return true;
}

WorkerPhase Phase(WorkerProcess& worker) {
  return static_cast<WorkerPhase>(worker.control().phase.load());
}

absl::Duration Ttl(WorkerProcess& worker) {
  return absl::Milliseconds(worker.control().ttl_ms.load());
}

}  // namespace

// The harness's own holder of a resource no worker uses. Its fenced op
// starts a gateway commit for the race's stall to catch; it holds a real
// lease, so the op passes the signature check when signing is on.
struct FaultInjector::Probe {
  std::unique_ptr<client::LockClient> lock;  // outlives the lease
  std::unique_ptr<client::GatewayClient> gateway;
  std::unique_ptr<client::Lease> lease;
};

std::unique_ptr<FaultInjector::Probe> FaultInjector::AcquireProbe(int gateway_index) {
  client::ClientOptions options;
  options.rpc_timeout = absl::Seconds(60);
  auto lock = client::LockClient::Connect(cluster_->lockservice_target(), options);
  auto gateway = client::GatewayClient::Connect(gateways_[gateway_index]->address(), options);
  if (!lock.ok() || !gateway.ok()) return nullptr;
  auto probe = std::make_unique<Probe>();
  probe->lock = *std::move(lock);
  probe->gateway = *std::move(gateway);
  client::AcquireOptions acquire;
  acquire.ttl = absl::Seconds(60);
  acquire.wait = absl::Seconds(10);
  const std::string resource = ProbeResource(gateway_index);
  absl::StatusOr<std::unique_ptr<client::Lease>> lease =
      probe->lock->AcquireLease(resource, "torture-harness", acquire);
  if (!lease.ok()) {
    Log(absl::StrCat("race probe: no lease on ", resource, ": ", lease.status().ToString()));
    return nullptr;
  }
  probe->lease = *std::move(lease);
  return probe;
}

void FaultInjector::ReleaseAsOperator(const std::string& resource, uint64_t token) {
  auto lock = client::LockClient::Connect(cluster_->lockservice_target());
  absl::StatusOr<uint32_t> released =
      lock.ok() ? (*lock)->Release(resource, token) : absl::StatusOr<uint32_t>(lock.status());
  Log(absl::StrCat("an operator releases '", resource, "' with token ", token, ": ",
                   released.ok() ? "released" : released.status().ToString()));
}

std::string FaultInjector::PauseHolder(const Fault& fault) {
  WorkerProcess& worker = *workers_[fault.worker];
  absl::MutexLock episode(&worker.episode_mu);
  WorkerControl& control = worker.control();
  const absl::Time give_up = absl::Now() + reach_timeout_;
  for (;;) {
    if (!WaitFor([&] { return control.holding.load() == 1; }, give_up - absl::Now())) {
      return "the worker held no lease all that time";
    }
    absl::Status stopped = worker.process().StopAndWait(absl::Seconds(10));
    if (!stopped.ok()) return stopped.ToString();
    if (control.holding.load() == 1) break;
    worker.process().Signal(SIGCONT);  // it released just before the stop
  }
  const absl::Duration pause = Ttl(worker) * fault.ttl_factor;
  Log(absl::StrCat("stopped ", worker.name(), " holding token ", control.token.load(),
                   " (TTL ", absl::FormatDuration(Ttl(worker)), ") for ",
                   absl::FormatDuration(pause)));
  absl::SleepFor(pause);
  worker.process().Signal(SIGCONT);
  Count(&FaultTally::pauses);
  if (fault.ttl_factor > 1) Count(&FaultTally::pauses_past_ttl);
  return "";
}

std::string FaultInjector::KillHolder(const Fault& fault) {
  WorkerProcess& worker = *workers_[fault.worker];
  absl::MutexLock episode(&worker.episode_mu);
  WorkerControl& control = worker.control();
  if (!WaitFor([&] { return control.holding.load() == 1; }, reach_timeout_)) {
    return "the worker held no lease all that time";
  }
  const std::string name = worker.name();
  const uint64_t token = control.token.load();
  // Its lease (or term) lives on at the service until its TTL runs out; its
  // call in flight, if any, is cut off: unknown.
  absl::Status restarted = worker.Restart();
  if (!restarted.ok()) return restarted.ToString();
  Log(absl::StrCat("killed ", name, " (kill -9) holding token ", token, "; started ",
                   worker.name()));
  Count(&FaultTally::holder_kills);
  return "";
}

std::string FaultInjector::StopBeforeWrite(WorkerProcess& worker) {
  WorkerControl& control = worker.control();
  auto stopped = [&] {
    return Phase(worker) == WorkerPhase::kStoppedBeforeWrite &&
           testing::ProcessState(worker.pid()) == 'T';
  };
  control.stop_before_write.store(1);
  if (WaitFor(stopped, reach_timeout_)) return "";
  if (control.stop_before_write.exchange(0) == 1) {
    return "the worker did not reach a write all that time";
  }
  // It took the request just now: it is stopping.
  if (WaitFor(stopped, absl::Seconds(10))) return "";
  return "the worker took the request to stop but did not stop";
}

std::string FaultInjector::PauseBeforeWrite(const Fault& fault) {
  WorkerProcess& worker = *workers_[fault.worker];
  absl::MutexLock episode(&worker.episode_mu);
  std::string missed = StopBeforeWrite(worker);
  if (!missed.empty()) return missed;
  const absl::Duration pause = Ttl(worker) * fault.ttl_factor;
  Log(absl::StrCat("stopped ", worker.name(), " before its write with token ",
                   worker.control().token.load(), " (TTL ",
                   absl::FormatDuration(Ttl(worker)), ") for ", absl::FormatDuration(pause)));
  absl::SleepFor(pause);
  worker.process().Signal(SIGCONT);
  Count(&FaultTally::pauses);
  Count(&FaultTally::pauses_before_write);
  if (fault.ttl_factor > 1) Count(&FaultTally::pauses_past_ttl);
  return "";
}

WorkerProcess& FaultInjector::FreeWorker(int first) {
  const size_t gateways = gateways_.size();
  // Gateway workers only: the SQL workers come after them and use no gateway.
  const size_t workers = static_cast<size_t>(schedule_.profile.workers);
  for (size_t i = 0; i < workers; ++i) {
    const size_t index = (first + i) % workers;
    if (index % gateways != first % gateways) continue;  // another gateway's
    WorkerProcess& worker = *workers_[index];
    if (worker.episode_mu.TryLock()) {
      worker.episode_mu.Unlock();
      return worker;
    }
  }
  return *workers_[first];
}

// 1. The stale writer stops before its write. 2. Its gateway's next commit
// stalls (a probe write on an unused resource starts it), then every other
// gateway's next one. 3. The writer's lease expires (or an operator releases
// it); a successor is granted the resource and sends its fenced read, which
// queues behind a stall. 4. The writer resumes and sends its write, which
// queues too (on the writer's gateway a burst of its event loop is held
// open for them, the read first). 5. The stalls end: the read and the write
// commit in one batch of the writer's gateway; or, when the successor talks to
// another gateway, that gateway's stall ends first, and the writer's once
// the read has returned, so the write meets the fence the read raised in
// the shared database. A correct gateway refuses the write.
std::string FaultInjector::StaleWriterRace(const Fault& fault) {
  ServerNode& gateway = *gateways_[fault.gateway];
  // The probe's lease first: granted later, its token would come between
  // the writer's and its successor's.
  std::unique_ptr<Probe> probe = AcquireProbe(fault.gateway);
  WorkerProcess& writer = FreeWorker(fault.worker);
  absl::MutexLock episode(&writer.episode_mu);
  std::string missed = StopBeforeWrite(writer);
  if (!missed.empty()) return missed;
  const uint64_t token = writer.control().token.load();
  const uint32_t resource = writer.control().resource.load();
  const absl::Duration ttl = Ttl(writer);

  gateway.Arm("stall", "gateway.before_commit");
  std::thread probe_write([&probe] {
    if (probe != nullptr) (void)probe->gateway->Fence(*probe->lease);
  });
  const bool stalled =
      WaitFor([&] { return gateway.FailpointReached(); }, reach_timeout_);
  // The other gateways' stalls only now: a batch stalled there earlier could
  // hold a row lock that keeps this gateway's commit from ever reaching its
  // stall.
  for (ServerNode* g : gateways_) {
    if (g != &gateway) g->Arm("stall", "gateway.before_commit");
  }
  // Only now, so the successor's read queues behind the stall.
  if (fault.release_by_operator) ReleaseAsOperator(ResourceName(resource), token);

  WorkerProcess* rival = nullptr;
  uint64_t rival_token = 0;  // as it read: it may have released by the log line
  bool rival_same_gateway = false;
  bool rival_through_sql = false;
  auto rival_reads = [&] {
    for (size_t i = 0; i < workers_.size(); ++i) {
      WorkerProcess* w = workers_[i];
      WorkerControl& c = w->control();
      const uint64_t its_token = c.token.load();
      if (w != &writer && c.holding.load() == 1 && c.resource.load() == resource &&
          its_token > token && Phase(*w) == WorkerPhase::kReading) {
        rival = w;
        rival_token = its_token;
        // A SQL worker's read goes to no gateway: its commit is not stalled.
        rival_through_sql = static_cast<int>(i) >= schedule_.profile.workers;
        rival_same_gateway =
            !rival_through_sql && static_cast<int>(i % gateways_.size()) == fault.gateway;
        return true;
      }
    }
    return false;
  };
  if (stalled && WaitFor(rival_reads, ttl + absl::Seconds(10))) absl::SleepFor(kInFlight);
  // The gateway's event loop reads nothing while it commits: the read waits
  // in its socket, and once the stall ends it and the write would come in
  // whenever gRPC reads them, in one burst or in two. So the stall gives
  // way to a burst held open, which takes the read in now and the write
  // when it comes: they commit together, the read first.
  // The other gateways' stalls go first: on a shared PostgreSQL a batch
  // stalled there may hold a row lock that this gateway's commit (the
  // probe's) waits for, and then no burst would end here to be held.
  if (rival != nullptr && rival_same_gateway) {
    for (ServerNode* g : gateways_) {
      if (g != &gateway) g->Disarm();
    }
    gateway.Arm("hold", "gateway.burst_end");
    if (WaitFor([&] { return gateway.FailpointReached(); }, reach_timeout_)) {
      absl::SleepFor(kInFlight);  // the read taken in
    }
  }
  Log(absl::StrCat(
      "race: ", writer.name(), " (token ", token, ") resumes its write; ",
      rival != nullptr
          ? absl::StrCat(rival->name(), "'s fenced read with token ", rival_token,
                         rival_same_gateway  ? " waits in the stalled commit"
                         : rival_through_sql ? " went through SQL"
                                             : " went to another gateway")
          : "no successor's read is waiting"));
  writer.process().Signal(SIGCONT);
  if (WaitFor([&] { return Phase(writer) != WorkerPhase::kStoppedBeforeWrite; },
              absl::Seconds(10))) {
    absl::SleepFor(kInFlight);  // its write on the way
  }
  for (ServerNode* g : gateways_) {
    if (g != &gateway) g->Disarm();
  }
  if (rival != nullptr && !rival_same_gateway) {
    WaitFor([&] { return Phase(*rival) != WorkerPhase::kReading; }, absl::Seconds(10));
  }
  gateway.Disarm();
  probe_write.join();
  if (!stalled) return "no gateway commit reached the stall";
  Count(&FaultTally::pauses);
  Count(&FaultTally::pauses_before_write);
  Count(&FaultTally::stale_writer_races);
  if (rival != nullptr) Count(&FaultTally::races_with_rival);
  if (rival != nullptr && !rival_same_gateway) Count(&FaultTally::races_across_gateways);
  // Its lease expired (a successor has it), unless an operator released it.
  if (rival != nullptr && !fault.release_by_operator) Count(&FaultTally::pauses_past_ttl);
  return "";
}

}  // namespace fencegate::torture
