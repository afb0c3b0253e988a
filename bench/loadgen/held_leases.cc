#include "bench/loadgen/held_leases.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::bench {

absl::Status HeldLeases::Take(const RunConfig& config, const DriverFactory& make_driver,
                              int setup_threads, bool need_token, bool request_ids) {
  const int threads = std::min(config.resources, setup_threads);
  locks_.resize(config.resources);
  drivers_.resize(threads);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto driver = make_driver(10000 + t);  // holders apart from clients'
      if (!driver.ok()) {
        results[t] = driver.status();
        return;
      }
      drivers_[t] = *std::move(driver);
      results[t] = drivers_[t]->Open(config.hold_ttl);
      AcquireOptions options;
      options.ttl = config.hold_ttl;
      options.need_token = need_token;
      for (int i = t; i < config.resources && results[t].ok(); i += threads) {
        if (request_ids) options.request_id = absl::StrFormat("%016x%016x", t, i);
        auto lock = drivers_[t]->Acquire(ResourceName(config, i), options);
        if (!lock.ok()) {
          results[t] = lock.status();
        } else if (!lock->has_value()) {
          results[t] = absl::InternalError(
              absl::StrCat("setup: ", ResourceName(config, i), " is already held"));
        } else {
          locks_[i] = **std::move(lock);
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (const absl::Status& status : results) {
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("setup: ", status.message()));
    }
  }
  return absl::OkStatus();
}

void HeldLeases::Release() {
  const int threads = static_cast<int>(drivers_.size());
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    if (drivers_[t] == nullptr) continue;
    workers.emplace_back([this, t, threads] {
      for (size_t i = t; i < locks_.size(); i += threads) {
        if (!locks_[i].resource.empty()) drivers_[t]->Release(locks_[i]).IgnoreError();
      }
      drivers_[t]->Close();
    });
  }
  for (auto& worker : workers) worker.join();
}

}  // namespace fencegate::bench
