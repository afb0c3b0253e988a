#include "bench/loadgen/workloads.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "bench/loadgen/cpu_usage.h"
#include "bench/loadgen/held_leases.h"
#include "bench/loadgen/kinds_workloads.h"

namespace fencegate::bench {
namespace {

enum class Outcome { kDone, kNotAcquired, kAbandoned, kError };

struct OpResult {
  Outcome outcome = Outcome::kDone;
  absl::Duration wait;  // handoff: asking to being granted
  bool changed_holder = false;  // handoff: the previous holder was another client
  bool wrote = false;           // rw_mix: an exclusive cycle (its wait is `wait`)
  absl::Status error;
};

OpResult Failed(absl::Status status) {
  OpResult result;
  result.outcome = Outcome::kError;
  result.error = std::move(status);
  return result;
}

OpResult Ended(Outcome outcome) {
  OpResult result;
  result.outcome = outcome;
  return result;
}

// The summary of a setup-like run (hold, fill): `ops` done in `took`, and
// the CPU used meanwhile.
RunSummary SummarizeStateRun(const RunConfig& config, int64_t ops, absl::Duration took,
                             const CpuSnapshot& cpu_start, const CpuSnapshot& cpu_end) {
  RunSummary summary;
  summary.ops = ops;
  summary.ops_per_s = ops / absl::ToDoubleSeconds(took);
  const CpuShares cpu = CpuBetween(cpu_start, cpu_end, summary.ops);
  summary.client_cpu_us_per_op = cpu.self_us_per_op;
  if (!config.server_pids.empty()) summary.server_cpu_us_per_op = cpu.servers_us_per_op;
  return summary;
}

class Client {
 public:
  Client(const RunConfig& config, int index, Driver& driver, const HeldLeases& leases,
         const std::string& value, absl::Time end, std::atomic<int>& last_holder,
         std::atomic<int>& holders, ExclusionCheck& check)
      : config_(config),
        index_(index),
        driver_(driver),
        leases_(leases),
        value_(value),
        key_(absl::StrCat("k", index)),
        end_(end),
        last_holder_(last_holder),
        holders_(holders),
        kinds_(config, index, driver, check, value, end) {}

  // pipelined_write: the whole run on this client's connection, each write
  // recorded like an op of the closed loop.
  void RunPipelined(absl::Time start, ClientTally& tally, FirstError& errors) {
    auto lock_of = [this](uint64_t k) -> const HeldLock& { return leases_.lock(Resource(k)); };
    auto done = [&](uint64_t, absl::Time sent, const absl::Status& outcome) {
      const absl::Time answered = absl::Now();
      if (!outcome.ok()) {
        errors.Record(outcome);
        ++tally.errors;
        return;
      }
      if (answered < start || answered >= end_) return;
      tally.latency_ns.push_back(absl::ToInt64Nanoseconds(answered - sent));
    };
    absl::Status status = driver_.PipelinedWrites(lock_of, key_, value_, config_.depth,
                                                  end_, Driver::kUntilEnd, done);
    if (!status.ok()) {
      errors.Record(status);
      ++tally.errors;
    }
  }

  OpResult Run(uint64_t k) {
    switch (config_.workload) {
      case Workload::kLockCycle:
        return LockCycle(Resource(k));
      case Workload::kFencedWrite:
        return Status(driver_.FencedWrite(leases_.lock(Resource(k)), key_, value_));
      case Workload::kHandoff:
        return Handoff();
      case Workload::kSharedCycle:
        return Kinds(kinds_.SharedCycle(k));
      case Workload::kRwMix:
        return Kinds(kinds_.RwMix());
      case Workload::kMultiCycle:
        return Kinds(kinds_.MultiCycle(k));
      case Workload::kRpc:
        return Status(driver_.EmptyCall());
      case Workload::kPipelinedWrite:  // RunPipelined()
      case Workload::kHold:            // HoldLeases()
      case Workload::kFill:            // FillResources()
      case Workload::kPark:            // park_waiters.h
      case Workload::kLeaseHold:       // lease_hold.h
        break;
    }
    return Failed(absl::InternalError("unknown workload"));
  }

 private:
  int Resource(uint64_t k) const {
    return static_cast<int>((index_ + k * config_.clients) % config_.resources);
  }

  static OpResult Status(absl::Status status) {
    return status.ok() ? OpResult{} : Failed(std::move(status));
  }

  static OpResult Kinds(absl::StatusOr<KindsOp> op) {
    if (!op.ok()) return Failed(op.status());
    if (op->abandoned) return Ended(Outcome::kAbandoned);
    if (op->not_acquired) return Ended(Outcome::kNotAcquired);
    OpResult result;
    result.wrote = op->wrote;
    result.wait = op->wait;
    return result;
  }

  OpResult LockCycle(int resource) {
    AcquireOptions options;
    options.ttl = config_.lock_ttl;
    options.wait = config_.resources == 1;
    options.give_up = end_;
    options.need_token = false;
    auto lock = driver_.Acquire(ResourceName(config_, resource), options);
    if (!lock.ok()) return Failed(lock.status());
    if (!lock->has_value()) {
      return Ended(options.wait ? Outcome::kAbandoned : Outcome::kNotAcquired);
    }
    absl::Status exclusive = options.wait ? EnterExclusive(holders_) : absl::OkStatus();
    if (options.wait) holders_.fetch_sub(1);
    absl::Status released = driver_.Release(**lock);
    if (!exclusive.ok()) return Failed(std::move(exclusive));
    return Status(std::move(released));
  }


  OpResult Handoff() {
    AcquireOptions options;
    options.ttl = config_.lock_ttl;
    options.wait = true;
    options.give_up = end_;
    const absl::Time asked = absl::Now();
    auto lock = driver_.Acquire(ResourceName(config_, 0), options);
    if (!lock.ok()) return Failed(lock.status());
    if (!lock->has_value()) return Ended(Outcome::kAbandoned);
    OpResult result;
    result.wait = absl::Now() - asked;
    absl::Status exclusive = EnterExclusive(holders_);
    // Grants are serialized by the lock, so this sees them in lock order.
    result.changed_holder = last_holder_.exchange(index_) != index_;
    absl::Status written = driver_.FencedWrite(**lock, key_, value_);
    holders_.fetch_sub(1);
    absl::Status released = driver_.Release(**lock);
    if (!exclusive.ok()) return Failed(std::move(exclusive));
    if (!written.ok()) return Failed(std::move(written));
    if (!released.ok()) return Failed(std::move(released));
    return result;
  }

  const RunConfig& config_;
  const int index_;
  Driver& driver_;
  const HeldLeases& leases_;
  const std::string& value_;
  const std::string key_;
  const absl::Time end_;
  std::atomic<int>& last_holder_;  // handoff: the client that got the lock last
  // Hot resource: clients that believe they hold the lock. Raised after a
  // grant, lowered before the release is sent, so more than one at a time
  // means the system granted the lock twice.
  std::atomic<int>& holders_;
  KindsClient kinds_;
};

// hold: every resource's lease taken by the clients, and left held.
absl::StatusOr<RunSummary> HoldLeases(const RunConfig& config,
                                      const DriverFactory& make_driver) {
  HeldLeases leases;
  const absl::Time start = absl::Now();
  const CpuSnapshot cpu_start = TakeCpuSnapshot(config.server_pids);
  if (absl::Status taken = leases.Take(config, make_driver, config.clients, /*need_token=*/false,
                                         /*request_ids=*/true);
      !taken.ok()) {
    return taken;
  }
  const CpuSnapshot cpu_end = TakeCpuSnapshot(config.server_pids);
  // `leases` goes without releasing: they stay held.
  return SummarizeStateRun(config, config.resources, absl::Now() - start, cpu_start,
                           cpu_end);
}

// fill: one fenced write on every resource, pipelined, each client its share.
absl::StatusOr<RunSummary> FillResources(const RunConfig& config,
                                         const DriverFactory& make_driver) {
  const std::string value(config.value_bytes, 'v');
  std::vector<absl::Status> results(config.clients);
  std::atomic<int64_t> failed{0};
  FirstError errors;
  const absl::Time start = absl::Now();
  const CpuSnapshot cpu_start = TakeCpuSnapshot(config.server_pids);
  std::vector<std::thread> threads;
  for (int c = 0; c < config.clients; ++c) {
    threads.emplace_back([&, c] {
      auto driver = make_driver(c);
      if (!driver.ok()) {
        results[c] = driver.status();
        return;
      }
      if (results[c] = (*driver)->Open(config.hold_ttl); !results[c].ok()) return;
      HeldLock lock;
      lock.token = 1;
      auto lock_of = [&](uint64_t k) -> const HeldLock& {
        lock.resource = ResourceName(config, static_cast<int>(c + k * config.clients));
        return lock;
      };
      auto done = [&](uint64_t, absl::Time, const absl::Status& outcome) {
        if (outcome.ok()) return;
        errors.Record(outcome);
        failed.fetch_add(1);
      };
      const uint64_t share = (config.resources - c + config.clients - 1) / config.clients;
      results[c] = (*driver)->PipelinedWrites(lock_of, "k", value, config.depth,
                                              absl::InfiniteFuture(), share, done);
      (*driver)->Close();
    });
  }
  for (auto& thread : threads) thread.join();
  const CpuSnapshot cpu_end = TakeCpuSnapshot(config.server_pids);
  const absl::Duration took = absl::Now() - start;
  for (const absl::Status& status : results) {
    if (!status.ok())
      return absl::Status(status.code(), absl::StrCat("fill: ", status.message()));
  }
  if (failed.load() > 0) {
    return absl::InternalError(
        absl::StrCat("fill: ", failed.load(), " writes failed; first: ", errors.Take()));
  }
  return SummarizeStateRun(config, config.resources, took, cpu_start, cpu_end);
}

}  // namespace

void AddCpu(const RunConfig& config, const CpuSnapshot& start, const CpuSnapshot& end,
            RunSummary& summary) {
  const CpuShares cpu = CpuBetween(start, end, summary.ops);
  summary.client_cpu_us_per_op = cpu.self_us_per_op;
  if (!config.server_pids.empty()) summary.server_cpu_us_per_op = cpu.servers_us_per_op;
  summary.other_cpu_share = cpu.others;
  summary.client_switches_per_op = cpu.self_switches_per_op;
  summary.server_switches_per_op = cpu.server_switches_per_op;
}

absl::Status EnterExclusive(std::atomic<int>& holders) {
  if (holders.fetch_add(1) != 0) {
    return absl::InternalError(
        "mutual exclusion violated: two clients hold the hot resource at once");
  }
  return absl::OkStatus();
}

std::string ResourceName(const RunConfig& config, int index) {
  return absl::StrCat(config.run_id, "-r", index);
}

absl::StatusOr<Workload> ParseWorkload(absl::string_view name) {
  if (name == "lock_cycle") return Workload::kLockCycle;
  if (name == "fenced_write") return Workload::kFencedWrite;
  if (name == "pipelined_write") return Workload::kPipelinedWrite;
  if (name == "handoff") return Workload::kHandoff;
  if (name == "shared_cycle") return Workload::kSharedCycle;
  if (name == "rw_mix") return Workload::kRwMix;
  if (name == "multi_cycle") return Workload::kMultiCycle;
  if (name == "rpc") return Workload::kRpc;
  if (name == "hold") return Workload::kHold;
  if (name == "fill") return Workload::kFill;
  if (name == "park") return Workload::kPark;
  if (name == "lease_hold") return Workload::kLeaseHold;
  return absl::InvalidArgumentError(absl::StrCat(
      "--workload: unknown '", name,
      "'; one of lock_cycle, fenced_write, pipelined_write, handoff, shared_cycle, "
      "rw_mix, multi_cycle, rpc, hold, fill, park, lease_hold, fsync"));
}

absl::Status ValidateRunConfig(const RunConfig& config) {
  if (config.clients < 1 || config.clients > 1024) {
    return absl::InvalidArgumentError("--clients must be in [1, 1024]");
  }
  const int min_resources = config.workload == Workload::kRpc ? 0 : 1;
  if (config.resources < min_resources || config.resources > 1000000) {
    return absl::InvalidArgumentError(
        "--resources must be in [1, 1000000] (0 allowed for rpc, which has none)");
  }
  if (config.workload == Workload::kHandoff && config.resources != 1) {
    return absl::InvalidArgumentError("--resources must be 1 for handoff (one hot resource)");
  }
  if (config.workload == Workload::kMultiCycle && config.resources < kMultiResources) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--resources must be at least ", kMultiResources, " for multi_cycle (",
        kMultiResources, " distinct resources per acquire)"));
  }
  if (config.duration <= absl::ZeroDuration() || config.warmup < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--duration must be > 0 and --warmup >= 0");
  }
  if (config.hold_ttl < absl::Seconds(60) || config.hold_ttl > absl::Hours(24)) {
    return absl::InvalidArgumentError("--hold_ttl must be in [60s, 24h]");
  }
  // Leases are not renewed during a run: it must end well within them.
  if (config.warmup + config.duration > absl::Seconds(40)) {
    return absl::InvalidArgumentError(
        "--warmup + --duration must be at most 40s (fenced_write leases last 60s "
        "and are not renewed)");
  }
  if (config.depth < 1 || config.depth > 256) {
    return absl::InvalidArgumentError("--depth must be in [1, 256]");
  }
  if (config.value_bytes < 1 || config.value_bytes > (1 << 20)) {
    return absl::InvalidArgumentError("--value_bytes must be in [1, 1 MiB]");
  }
  return absl::OkStatus();
}

absl::StatusOr<RunSummary> RunWorkload(const RunConfig& config,
                                       const DriverFactory& make_driver,
                                       std::string* first_error) {
  if (absl::Status valid = ValidateRunConfig(config); !valid.ok()) return valid;
  HeldLeases leases;
  if (config.workload == Workload::kHold) return HoldLeases(config, make_driver);
  if (config.workload == Workload::kFill) return FillResources(config, make_driver);
  if (config.workload == Workload::kPark) {
    return absl::InvalidArgumentError("park runs through ParkedWaiters (park_waiters.h)");
  }
  if (config.workload == Workload::kFencedWrite ||
      config.workload == Workload::kPipelinedWrite) {
    if (absl::Status taken = leases.Take(config, make_driver, config.setup_threads);
        !taken.ok()) {
      leases.Release();
      return taken;
    }
  }
  const std::string value(config.value_bytes, 'v');

  // Every client connects (and opens its session) before the clock starts.
  std::vector<ClientTally> tallies(config.clients);
  std::vector<absl::Status> opened(config.clients);
  absl::BlockingCounter ready(config.clients);
  absl::Notification go;
  absl::Time start;
  absl::Time end;
  FirstError errors;
  std::atomic<int> last_holder{-1};
  std::atomic<int> holders{0};
  ExclusionCheck check(config.resources);
  std::vector<std::thread> threads;
  for (int c = 0; c < config.clients; ++c) {
    threads.emplace_back([&, c] {
      std::unique_ptr<Driver> driver;
      if (auto made = make_driver(c); made.ok()) {
        driver = *std::move(made);
        opened[c] = driver->Open(config.lock_ttl);
      } else {
        opened[c] = made.status();
      }
      ready.DecrementCount();
      go.WaitForNotification();
      if (!opened[c].ok()) return;
      Client client(config, c, *driver, leases, value, end, last_holder, holders, check);
      ClientTally& tally = tallies[c];
      if (config.workload == Workload::kPipelinedWrite) {
        client.RunPipelined(start, tally, errors);
        driver->Close();
        return;
      }
      for (uint64_t k = 0;; ++k) {
        const absl::Time before = absl::Now();
        if (before >= end) break;
        OpResult op = client.Run(k);
        const absl::Time after = absl::Now();
        // An op belongs to the window it completes in: completions per
        // second is the throughput, and a hand-off is counted when it
        // happens, however long its client waited before the window.
        // Errors count wherever they happen, warm-up included.
        if (op.outcome == Outcome::kError) {
          errors.Record(op.error);
          ++tally.errors;
          continue;
        }
        if (op.outcome == Outcome::kAbandoned) {
          if (before >= start) ++tally.abandoned;
          continue;
        }
        if (after < start || after >= end) continue;
        if (op.outcome == Outcome::kNotAcquired) ++tally.not_acquired;
        tally.latency_ns.push_back(absl::ToInt64Nanoseconds(after - before));
        if (config.workload == Workload::kHandoff) {
          tally.wait_ns.push_back(absl::ToInt64Nanoseconds(op.wait));
          if (op.changed_holder) ++tally.holder_changes;
        }
        if (op.wrote) {
          ++tally.writes;
          tally.wait_ns.push_back(absl::ToInt64Nanoseconds(op.wait));
        }
      }
      driver->Close();
    });
  }
  ready.Wait();
  start = absl::Now() + config.warmup;
  end = start + config.duration;
  go.Notify();
  // CPU used inside the measured window (the clients run meanwhile).
  absl::SleepFor(start - absl::Now());
  const CpuSnapshot cpu_start = TakeCpuSnapshot(config.server_pids);
  absl::SleepFor(end - absl::Now());
  const CpuSnapshot cpu_end = TakeCpuSnapshot(config.server_pids);
  for (auto& thread : threads) thread.join();
  leases.Release();

  for (const absl::Status& status : opened) {
    if (!status.ok()) return status;
  }
  *first_error = errors.Take();
  RunSummary summary = Summarize(tallies, config.duration);
  AddCpu(config, cpu_start, cpu_end, summary);
  return summary;
}

}  // namespace fencegate::bench
