#include "bench/loadgen/loop_workloads.h"

#include <atomic>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/clock.h"
#include "bench/loadgen/cpu_usage.h"
#include "bench/loadgen/held_leases.h"

namespace fencegate::bench {
namespace {

// One client's loop: touched only by the op in flight's callbacks.
struct LoopClient {
  uint64_t k = 0;
  absl::Time sent;
  ClientTally tally;
  // handoff: the op in flight's grant, and how long it waited for it.
  HeldLock lock;
  absl::Duration wait;
  bool changed_holder = false;
};

}  // namespace

absl::StatusOr<RunSummary> RunLoopWorkload(const RunConfig& config,
                                           const DriverFactory& setup, LoopDriver& loop,
                                           std::string* first_error) {
  if (absl::Status valid = ValidateRunConfig(config); !valid.ok()) return valid;
  const Workload workload = config.workload;
  if (workload != Workload::kFencedWrite && workload != Workload::kLockCycle &&
      workload != Workload::kHandoff && workload != Workload::kRpc) {
    return absl::InvalidArgumentError(
        "--shape=loop runs fenced_write, lock_cycle, handoff or rpc only");
  }
  if (workload == Workload::kLockCycle && config.resources < 2) {
    return absl::InvalidArgumentError(
        "--shape=loop runs lock_cycle on many resources only (a try-lock each)");
  }
  HeldLeases leases;
  if (workload == Workload::kFencedWrite) {
    if (absl::Status taken = leases.Take(config, setup, config.setup_threads);
        !taken.ok()) {
      leases.Release();
      return taken;
    }
  }
  if (absl::Status opened = loop.Open(config.clients); !opened.ok()) {
    leases.Release();
    return opened;
  }
  const std::string value(config.value_bytes, 'v');
  std::vector<std::string> keys;
  for (int c = 0; c < config.clients; ++c) keys.push_back(absl::StrCat("k", c));
  std::vector<LoopClient> clients(config.clients);
  FirstError errors;
  absl::BlockingCounter finished(config.clients);
  // handoff: clients holding the hot resource now (more than one is a
  // broken mutual exclusion), and the client that got it last.
  std::atomic<int> holders{0};
  std::atomic<int> last_holder{-1};
  const absl::Time start = absl::Now() + config.warmup;
  const absl::Time end = start + config.duration;

  // handoff, as workloads.h's: a waiting acquire of the hot resource, one
  // fenced write under its token, its release; `done` after the release.
  auto Handoff = [&](int c, LoopDriver::Done done) {
    loop.AcquireWaiting(
        c, ResourceName(config, 0), config.lock_ttl, end,
        [&, c, done = std::move(done)](
            absl::StatusOr<std::optional<HeldLock>> granted) mutable {
          LoopClient& client = clients[c];
          if (!granted.ok()) return done(granted.status());
          if (!granted->has_value()) {  // the window ended first
            if (client.sent >= start) ++client.tally.abandoned;
            loop.Finished(c);
            finished.DecrementCount();
            return;
          }
          client.lock = **std::move(granted);
          client.wait = absl::Now() - client.sent;
          if (absl::Status exclusive = EnterExclusive(holders); !exclusive.ok()) {
            return done(std::move(exclusive));
          }
          // Grants are serialized by the lock, so this sees them in lock order.
          client.changed_holder = last_holder.exchange(c) != c;
          loop.FencedWrite(
              c, client.lock, keys[c], value,
              [&, c, done = std::move(done)](absl::StatusOr<bool> written) mutable {
                holders.fetch_sub(1);
                if (!written.ok()) return done(written.status());
                loop.Release(c, clients[c].lock, std::move(done));
              });
        });
  };

  // Starts client c's next op, or finishes it once the window is over.
  std::function<void(int)> next = [&](int c) {
    LoopClient& client = clients[c];
    const absl::Time now = absl::Now();
    if (now >= end) {
      loop.Finished(c);
      finished.DecrementCount();
      return;
    }
    client.sent = now;
    const uint64_t k = client.k++;
    auto done = [&, c](absl::StatusOr<bool> outcome) {
      LoopClient& client = clients[c];
      const absl::Time after = absl::Now();
      if (!outcome.ok()) {  // errors count wherever they happen, and stop it
        errors.Record(outcome.status());
        ++client.tally.errors;
        loop.Finished(c);
        finished.DecrementCount();
        return;
      }
      if (after >= start && after < end) {
        if (!*outcome) ++client.tally.not_acquired;
        client.tally.latency_ns.push_back(absl::ToInt64Nanoseconds(after - client.sent));
        if (workload == Workload::kHandoff) {
          client.tally.wait_ns.push_back(absl::ToInt64Nanoseconds(client.wait));
          if (client.changed_holder) ++client.tally.holder_changes;
        }
      }
      next(c);
    };
    // rpc has no resources.
    const int resource =
        config.resources == 0
            ? 0
            : static_cast<int>((c + k * config.clients) % config.resources);
    switch (workload) {
      case Workload::kFencedWrite:
        loop.FencedWrite(c, leases.lock(resource), keys[c], value, std::move(done));
        break;
      case Workload::kLockCycle:
        loop.LockCycle(c, ResourceName(config, resource), config.lock_ttl,
                       std::move(done));
        break;
      case Workload::kHandoff:
        Handoff(c, std::move(done));
        break;
      default:
        loop.Echo(c, config.value_bytes, std::move(done));
        break;
    }
  };
  loop.Start(next);
  // CPU used inside the measured window.
  absl::SleepFor(start - absl::Now());
  const CpuSnapshot cpu_start = TakeCpuSnapshot(config.server_pids);
  absl::SleepFor(end - absl::Now());
  const CpuSnapshot cpu_end = TakeCpuSnapshot(config.server_pids);
  finished.Wait();
  loop.Stop();
  leases.Release();

  *first_error = errors.Take();
  std::vector<ClientTally> tallies;
  for (LoopClient& client : clients) tallies.push_back(std::move(client.tally));
  RunSummary summary = Summarize(tallies, config.duration);
  AddCpu(config, cpu_start, cpu_end, summary);
  return summary;
}

}  // namespace fencegate::bench
