// ResourceState (resource_state.h): one resource's leases, queue and
// lock-delay, and the questions about them.
#include "lockservice/core/resource_state.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"

namespace fencegate::lockservice {

HeldLease* ResourceState::FindLease(uint64_t token) {
  if (lease && lease->token == token) return &*lease;
  if (shared == nullptr) return nullptr;
  for (HeldLease& held : shared->leases) {
    if (held.token == token) return &held;
  }
  return nullptr;
}

HeldLease* ResourceState::ReentrantLease(const std::string& holder, LeaseMode mode) {
  if (mode == LeaseMode::kExclusive) {
    return lease && lease->holder == holder ? &*lease : nullptr;
  }
  if (shared == nullptr) return nullptr;
  for (HeldLease& held : shared->leases) {
    if (held.holder == holder) return &held;
  }
  return nullptr;
}

const HeldLease* ResourceState::Oldest() const {
  if (lease) return &*lease;
  if (shared == nullptr || shared->leases.empty()) return nullptr;
  return &*std::min_element(
      shared->leases.begin(), shared->leases.end(),
      [](const HeldLease& a, const HeldLease& b) { return a.token < b.token; });
}

SharedHolds& ResourceState::EnsureShared() {
  if (shared == nullptr) shared = std::make_unique<SharedHolds>();
  return *shared;
}

bool ResourceState::IsSemaphore() const {
  // A semaphore whose last permit just ended (LockManager::FindCurrent) is
  // nothing any more, though Trim has not dropped its size yet.
  return shared != nullptr && shared->permits != 0 &&
         (!shared->leases.empty() || Waiting() != 0);
}

std::optional<WaitQueue::iterator> ResourceState::FindParked(
    const std::string& holder, const std::string& request_id) {
  if (queue == nullptr) return std::nullopt;
  return queue->Find(holder, request_id);
}

WaitQueue& ResourceState::EnsureQueue() {
  if (queue == nullptr) queue = std::make_unique<WaitQueue>();
  return *queue;
}

absl::Status ResourceState::CheckKind(const AcquireArgs& args, absl::Time now) const {
  const bool semaphore = IsSemaphore();
  const bool in_use = lease || SharedCount() != 0 || Waiting() != 0 || Delayed(now);
  if (args.mode == LeaseMode::kPermit) {
    if (semaphore && shared->permits != args.permits) {
      return InvalidFieldError(
          "permits",
          absl::StrCat("permits: resource '", args.resource, "' is a semaphore of ",
                       shared->permits, " permits while it is in use, not ", args.permits,
                       "; ask for the same number (it is fixed until nothing "
                       "holds or waits for it)"));
    }
    if (!semaphore && in_use) {
      return InvalidFieldError(
          "mode",
          absl::StrCat(
              "mode: resource '", args.resource,
              "' is in use as a read-write lock, not a semaphore; use another resource "
              "name for the semaphore"));
    }
  } else if (semaphore) {
    return InvalidFieldError(
        "mode", absl::StrCat("mode: resource '", args.resource,
                             "' is in use as a semaphore of ", shared->permits,
                             " permits; acquire it with mode PERMIT and permits = ",
                             shared->permits, ", or use another resource name"));
  }
  return absl::OkStatus();
}

GrantFacts ResourceState::FactsFor(const std::string& holder, absl::Time now,
                                   size_t max_holders) const {
  GrantFacts facts;
  facts.exclusive_held = lease.has_value();
  facts.exclusive_is_askers = lease && lease->holder == holder;
  facts.shared = SharedCount();
  facts.has_shared_holds = shared != nullptr;
  facts.permits = shared != nullptr ? shared->permits : 0;
  facts.delayed = Delayed(now);
  facts.max_holders = max_holders;
  return facts;
}

ResourceInfo ResourceState::Info(absl::Time now) const {
  ResourceInfo info;
  info.waiters = static_cast<uint32_t>(Waiting());
  if (IsSemaphore()) {
    info.mode = LeaseMode::kPermit;
    info.permits = shared->permits;
  } else if (SharedCount() != 0) {
    info.mode = LeaseMode::kShared;
  }
  info.holders = static_cast<uint32_t>(SharedCount() + (lease ? 1 : 0));
  if (const HeldLease* oldest = Oldest()) {
    // A lease past its expiry whose timer has not run yet (the status page
    // reads without ending it) is shown as expiring now.
    info.held = true;
    info.holder = oldest->holder;
    info.token = oldest->token;
    info.remaining = std::max(absl::ZeroDuration(), oldest->expiry.get() - now);
    info.hold_count = oldest->hold_count;
  } else if (Delayed(now)) {
    info.lock_delay_remaining = delay_until.get() - now;
  }
  return info;
}

AcquireResult ResourceState::NotAcquired(absl::Time now) const {
  AcquireResult result;
  if (const HeldLease* oldest = Oldest()) {
    result.reason = NotAcquiredReason::kHeld;
    result.holder_token = oldest->token;
    result.retry_after = oldest->expiry.get() - now;
  } else if (Delayed(now)) {
    result.reason = NotAcquiredReason::kLockDelay;
    result.retry_after = delay_until.get() - now;
  } else {
    result.reason = NotAcquiredReason::kHeld;  // others are queued ahead
  }
  return result;
}

void ResourceState::Trim() {
  if (queue != nullptr && queue->empty()) queue.reset();
  // A semaphore keeps its size while anybody holds or waits.
  if (shared != nullptr && shared->leases.empty() &&
      (shared->permits == 0 || queue == nullptr)) {
    shared.reset();
  }
}

}  // namespace fencegate::lockservice
