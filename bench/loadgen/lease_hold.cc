#include "bench/loadgen/lease_hold.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/loadgen/cpu_usage.h"
#include "bench/loadgen/grpc_util.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::bench {
namespace {

int ThreadCount() {
  int n = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task", error)) {
    (void)entry;
    ++n;
  }
  return n;
}

}  // namespace

absl::StatusOr<std::string> RunLeaseHold(const RunConfig& config,
                                         const std::string& lock_target) {
  if (lock_target.empty()) return absl::InvalidArgumentError("--target is required");
  auto channel = ConnectOwnChannel(lock_target, kCallTimeout);
  if (!channel.ok()) return channel.status();
  client::LockClient locks(*channel);  // the Session stream, as by default
  const int leases = config.resources;
  const int before = ThreadCount();

  // Taken from a few threads of our own, joined before the count that matters.
  std::vector<std::unique_ptr<client::Lease>> held(leases);
  std::vector<absl::Status> failed(config.setup_threads);
  {
    std::vector<std::thread> takers;
    for (int t = 0; t < config.setup_threads; ++t) {
      takers.emplace_back([&, t] {
        client::AcquireOptions options;
        options.ttl = config.lock_ttl;
        for (int i = t; i < leases && failed[t].ok(); i += config.setup_threads) {
          auto lease = locks.AcquireLease(ResourceName(config, i),
                                          absl::StrCat("loadgen-", getpid()), options);
          if (lease.ok()) {
            held[i] = *std::move(lease);
          } else {
            failed[t] = lease.status();
          }
        }
      });
    }
    for (auto& taker : takers) taker.join();
  }
  for (const absl::Status& status : failed) {
    if (!status.ok())
      return absl::Status(status.code(), absl::StrCat("setup: ", status.message()));
  }

  const CpuSnapshot cpu_start = TakeCpuSnapshot(config.server_pids);
  const absl::Time start = absl::Now();
  const absl::Time end = start + config.duration;
  int threads_max = ThreadCount();
  for (absl::Time now = absl::Now(); now < end; now = absl::Now()) {
    absl::SleepFor(std::min(end - now, absl::Seconds(1)));  // samples, once a second
    threads_max = std::max(threads_max, ThreadCount());
  }
  const CpuSnapshot cpu_end = TakeCpuSnapshot(config.server_pids);
  int lost = 0;
  for (auto& lease : held) lost += lease->lost() ? 1 : 0;
  const double held_s = absl::ToDoubleSeconds(absl::Now() - start);
  const double renewals = leases * held_s / (absl::ToDoubleSeconds(config.lock_ttl) / 3);
  const CpuShares cpu =
      CpuBetween(cpu_start, cpu_end, static_cast<int64_t>(std::max(renewals, 1.0)));
  held.clear();  // each releases its lease
  return absl::StrFormat(
      "{\"system\": \"fencegate-stream\", \"workload\": \"lease_hold\", \"leases\": %d, "
      "\"ttl_s\": %.1f, \"held_s\": %.1f, \"lost\": %d, \"threads_before\": %d, "
      "\"threads_max\": %d, \"threads_added\": %d, \"client_cpu_us_per_renewal\": %.1f, "
      "\"server_cpu_us_per_renewal\": %.1f}",
      leases, absl::ToDoubleSeconds(config.lock_ttl), held_s, lost, before, threads_max,
      threads_max - before, cpu.self_us_per_op, cpu.servers_us_per_op);
}

}  // namespace fencegate::bench
