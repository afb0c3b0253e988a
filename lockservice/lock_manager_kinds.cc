// Kinds of lease: which requests go together on a resource (lock_manager.h,
// "Kinds of lease"), and what a resource with several leases says of
// itself.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "lockservice/grant_rule.h"
#include "lockservice/lock_manager.h"
#include "lockservice/lock_manager_internal.h"

namespace fencegate::lockservice {

bool LockManager::IsSemaphore(const Resource& r) {
  // A semaphore whose last permit just ended (FindCurrent) is nothing any
  // more, though MaybeForget has not dropped its size yet.
  return r.shared != nullptr && r.shared->permits != 0 &&
         (!r.shared->leases.empty() || Waiting(r) != 0);
}

absl::Status LockManager::CheckKind(const AcquireArgs& args, const Resource& r) const {
  const bool semaphore = IsSemaphore(r);
  const bool in_use = r.lease || SharedCount(r) != 0 || Waiting(r) != 0 ||
                      clock_->Now() < r.delay_until.get();
  if (args.mode == LeaseMode::kPermit) {
    if (semaphore && r.shared->permits != args.permits) {
      return InvalidFieldError(
          "permits", absl::StrCat("permits: resource '", args.resource,
                                  "' is a semaphore of ", r.shared->permits,
                                  " permits while it is in use, not ", args.permits,
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
                             "' is in use as a semaphore of ", r.shared->permits,
                             " permits; acquire it with mode PERMIT and permits = ",
                             r.shared->permits, ", or use another resource name"));
  }
  return absl::OkStatus();
}

GrantFacts LockManager::GrantFactsOf(const Resource& r, const std::string& holder) const {
  GrantFacts facts;
  facts.exclusive_held = r.lease.has_value();
  facts.exclusive_is_askers = r.lease && r.lease->holder == holder;
  facts.shared = SharedCount(r);
  facts.has_shared_holds = r.shared != nullptr;
  facts.permits = r.shared != nullptr ? r.shared->permits : 0;
  facts.delayed = clock_->Now() < r.delay_until.get();
  facts.max_holders = limits_.max_holders_per_resource;
  return facts;
}

LockManager::HeldLease* LockManager::ReentrantLease(Resource& r,
                                                    const std::string& holder,
                                                    LeaseMode mode) {
  if (mode == LeaseMode::kExclusive) {
    return r.lease && r.lease->holder == holder ? &*r.lease : nullptr;
  }
  if (r.shared == nullptr) return nullptr;
  for (HeldLease& lease : r.shared->leases) {
    if (lease.holder == holder) return &lease;
  }
  return nullptr;
}

LockManager::HeldLease* LockManager::FindLease(Resource& r, uint64_t token) {
  if (r.lease && r.lease->token == token) return &*r.lease;
  if (r.shared == nullptr) return nullptr;
  for (HeldLease& lease : r.shared->leases) {
    if (lease.token == token) return &lease;
  }
  return nullptr;
}

const LockManager::HeldLease* LockManager::Oldest(const Resource& r) {
  if (r.lease) return &*r.lease;
  if (r.shared == nullptr || r.shared->leases.empty()) return nullptr;
  return &*std::min_element(
      r.shared->leases.begin(), r.shared->leases.end(),
      [](const HeldLease& a, const HeldLease& b) { return a.token < b.token; });
}

size_t LockManager::SharedCount(const Resource& r) {
  return r.shared == nullptr ? 0 : r.shared->leases.size();
}

LockManager::SharedHolds& LockManager::SharedOf(Resource& r) {
  if (r.shared == nullptr) r.shared = std::make_unique<SharedHolds>();
  return *r.shared;
}

ResourceInfo LockManager::Info(const Resource& r, absl::Time now) const {
  ResourceInfo info;
  info.waiters = static_cast<uint32_t>(Waiting(r));
  if (IsSemaphore(r)) {
    info.mode = LeaseMode::kPermit;
    info.permits = r.shared->permits;
  } else if (SharedCount(r) != 0) {
    info.mode = LeaseMode::kShared;
  }
  info.holders = static_cast<uint32_t>(SharedCount(r) + (r.lease ? 1 : 0));
  if (const HeldLease* lease = Oldest(r)) {
    // A lease past its expiry whose timer has not run yet (the status page
    // reads without ending it) is shown as expiring now.
    info.held = true;
    info.holder = lease->holder;
    info.token = lease->token;
    info.remaining = std::max(absl::ZeroDuration(), lease->expiry.get() - now);
    info.hold_count = lease->hold_count;
  } else if (now < r.delay_until.get()) {
    info.lock_delay_remaining = r.delay_until.get() - now;
  }
  return info;
}

}  // namespace fencegate::lockservice
