#include "bench/loadgen/acquire_in_order.h"

#include <utility>

namespace fencegate::bench {
namespace {

// Releases `held` (best effort past the first error, which is returned).
absl::Status ReleaseAll(Driver& driver, const std::vector<HeldLock>& held) {
  absl::Status first;
  for (const HeldLock& lock : held) {
    absl::Status released = driver.Release(lock);
    if (first.ok() && !released.ok()) first = std::move(released);
  }
  return first;
}

}  // namespace

absl::StatusOr<std::optional<std::vector<HeldLock>>> AcquireEachInOrder(
    Driver& driver, const std::vector<std::string>& resources,
    const AcquireOptions& options) {
  std::vector<HeldLock> held;
  held.reserve(resources.size());
  for (const std::string& resource : resources) {
    absl::StatusOr<std::optional<HeldLock>> lock = driver.Acquire(resource, options);
    if (!lock.ok() || !lock->has_value()) {
      absl::Status released = ReleaseAll(driver, held);
      if (!lock.ok()) return lock.status();
      if (!released.ok()) return released;
      return std::nullopt;
    }
    held.push_back(**std::move(lock));
  }
  return held;
}

}  // namespace fencegate::bench
