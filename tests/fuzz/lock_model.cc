#include "tests/fuzz/lock_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "tests/fuzz/fuzz_support.h"

namespace fencegate::fuzz {

using lockservice::AcquireArgs;
using lockservice::AcquireResult;
using lockservice::NotAcquiredReason;
using lockservice::ReleaseArgs;
using lockservice::ReleaseResult;
using lockservice::RenewArgs;
using lockservice::RenewResult;
using lockservice::ResourceInfo;

namespace {

std::string Show(absl::Duration d) { return absl::FormatDuration(d); }

}  // namespace

LockModel::Lease* LockModel::Live(const std::string& name, absl::Time now) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return nullptr;
  Resource& r = it->second;
  if (r.lease && now >= r.lease->expiry) {
    r.expired_at = r.lease->expiry;
    r.lease.reset();
  }
  return r.lease ? &*r.lease : nullptr;
}

void LockModel::Expire(absl::Time now) {
  for (auto& [name, r] : resources_) Live(name, now);
}

void LockModel::OnAcquire(const AcquireArgs& args, absl::Time started, absl::Time now,
                          const absl::StatusOr<AcquireResult>& result) {
  if (!result.ok()) return;
  const AcquireResult& r = *result;
  Resource& res = resources_[args.resource];
  Lease* live = Live(args.resource, now);
  if (!r.acquired) {
    FUZZ_CHECK(now == started + args.wait, "'", args.resource, "' refused after ",
               Show(now - started), " of a wait of ", Show(args.wait));
    FUZZ_CHECK(r.reason == NotAcquiredReason::kHeld ||
                   r.reason == NotAcquiredReason::kLockDelay,
               "not acquired without a reason");
    // Also after a wait: a parked call of the holder is granted as soon as
    // its holder gets the lease through another call.
    FUZZ_CHECK(live == nullptr || live->holder != args.holder, "holder '", args.holder,
               "' was refused its own lock on '", args.resource, "'");
    const uint64_t holder_token = live != nullptr ? live->token : 0;
    FUZZ_CHECK(r.holder_token == holder_token, "not acquired names holder token ",
               r.holder_token, " but '", args.resource, "' is held by ", holder_token);
    FUZZ_CHECK(r.retry_after >= absl::ZeroDuration(), "negative retry_after");
    return;
  }
  FUZZ_CHECK(now >= started && now <= started + args.wait, "granted outside its wait");
  FUZZ_CHECK(r.ttl > absl::ZeroDuration() && r.ttl <= limits_.max_ttl,
             "granted for ", Show(r.ttl));
  if (live != nullptr && live->token == r.token) {  // reentrant
    FUZZ_CHECK(live->holder == args.holder, "token ", r.token, " of '", live->holder,
               "' given to '", args.holder, "'");
    FUZZ_CHECK(r.hold_count == live->holds + 1 ||
                   (!args.request_id.empty() && r.hold_count == live->holds),
               "reentrant acquire: ", live->holds, " holds became ", r.hold_count);
    FUZZ_CHECK(now + r.ttl >= live->expiry, "a reentrant acquire shortened the lease");
    live->holds = r.hold_count;
    live->expiry = now + r.ttl;
    live->ttl_high = std::max(live->ttl_high, args.ttl);
    if (args.request_id.empty()) live->ttl_low = std::max(live->ttl_low, args.ttl);
    return;
  }
  FUZZ_CHECK(live == nullptr, "'", args.resource, "' granted to '", args.holder,
             "' (token ", r.token, ") while token ", live->token, " of '", live->holder,
             "' holds it for ", Show(live->expiry - now), " more");
  FUZZ_CHECK(r.token > max_token_, "token ", r.token, " granted after token ", max_token_);
  if (res.expired_at && limits_.lock_delay > absl::ZeroDuration()) {
    FUZZ_CHECK(now >= *res.expired_at + limits_.lock_delay, "'", args.resource,
               "' granted ", Show(now - *res.expired_at), " after an expiry, within the lock-delay");
  }
  FUZZ_CHECK(r.hold_count == 1, "a new lease with ", r.hold_count, " holds");
  FUZZ_CHECK(r.ttl <= args.ttl, "granted ", Show(r.ttl), " for a TTL of ", Show(args.ttl));
  if (limits_.max_hold > absl::ZeroDuration()) {
    FUZZ_CHECK(r.ttl <= limits_.max_hold, "granted past max_hold");
  }
  max_token_ = r.token;
  res.lease = Lease{args.holder, r.token, 1, now + r.ttl, args.ttl, args.ttl};
  res.expired_at.reset();
}

void LockModel::CheckLeaseLost(const char* op, const std::string& resource, uint64_t token,
                               absl::Time now, const absl::Status& status) {
  Lease* live = Live(resource, now);
  FUZZ_CHECK(live == nullptr || live->token != token, op, " of '", resource,
             "' refused for token ", token, ", which holds it: ", status.ToString());
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  FUZZ_CHECK(info && info->reason == ErrorReason::kLeaseLost, op,
             " ABORTED without the lease-lost reason: ", status.ToString());
  const uint64_t holder_token = live != nullptr ? live->token : 0;
  FUZZ_CHECK(info->current_token == holder_token, op, " lease lost names token ",
             info->current_token, " but '", resource, "' is held by ", holder_token);
}

void LockModel::OnRenew(const RenewArgs& args, absl::Time now,
                        const absl::StatusOr<RenewResult>& result) {
  if (result.status().code() == absl::StatusCode::kAborted) {
    CheckLeaseLost("renew", args.resource, args.token, now, result.status());
  }
  if (!result.ok()) return;
  Lease* live = Live(args.resource, now);
  FUZZ_CHECK(live != nullptr && live->token == args.token, "renewed '", args.resource,
             "' with token ", args.token, ", which does not hold it");
  FUZZ_CHECK(result->ttl > absl::ZeroDuration(), "renew of '", args.resource,
             "' succeeded with ", Show(result->ttl), " left: the lease is over");
  FUZZ_CHECK(result->ttl <= args.ttl, "renewed for ", Show(result->ttl), " > ", Show(args.ttl));
  live->expiry = now + result->ttl;
  live->ttl_low = std::max(live->ttl_low, args.ttl);
  live->ttl_high = std::max(live->ttl_high, args.ttl);
}

void LockModel::OnRelease(const ReleaseArgs& args, absl::Time now,
                          const absl::StatusOr<ReleaseResult>& result) {
  if (result.status().code() == absl::StatusCode::kAborted) {
    CheckLeaseLost("release", args.resource, args.token, now, result.status());
  }
  if (!result.ok()) return;
  Lease* live = Live(args.resource, now);
  FUZZ_CHECK(live != nullptr && live->token == args.token, "released '", args.resource,
             "' with token ", args.token, ", which does not hold it");
  FUZZ_CHECK(result->hold_count + 1 == live->holds ||
                 (!args.request_id.empty() && result->hold_count == live->holds),
             "release: ", live->holds, " holds became ", result->hold_count);
  live->holds = result->hold_count;
  if (live->holds == 0) resources_[args.resource].lease.reset();
}

void LockModel::OnDescribe(const std::string& resource, absl::Time now,
                           const absl::StatusOr<ResourceInfo>& result) {
  if (!result.ok()) return;
  const ResourceInfo& info = *result;
  Lease* live = Live(resource, now);
  if (info.held) {
    FUZZ_CHECK(live != nullptr && live->token == info.token, "describe: '", resource,
               "' held by token ", info.token, ", expected ", live ? live->token : 0);
    FUZZ_CHECK(info.holder == live->holder && info.hold_count == live->holds,
               "describe: holder or holds of '", resource, "' differ");
    FUZZ_CHECK(info.remaining == live->expiry - now, "describe: '", resource, "' has ",
               Show(info.remaining), " left, expected ", Show(live->expiry - now));
    return;
  }
  FUZZ_CHECK(live == nullptr, "describe: '", resource, "' not held, but token ",
             live->token, " holds it for ", Show(live->expiry - now));
  const Resource& r = resources_[resource];
  absl::Duration delay = absl::ZeroDuration();
  if (r.expired_at && now < *r.expired_at + limits_.lock_delay) {
    delay = *r.expired_at + limits_.lock_delay - now;
  }
  FUZZ_CHECK(info.lock_delay_remaining == delay, "describe: lock-delay of '", resource,
             "' is ", Show(info.lock_delay_remaining), ", expected ", Show(delay));
}

void LockModel::OnRestart(absl::Time now, const std::map<std::string, ResourceInfo>& info) {
  Expire(now);
  for (auto& [name, r] : resources_) {
    r.expired_at.reset();
    auto it = info.find(name);
    const bool held = it != info.end() && it->second.held;
    if (!r.lease) {
      FUZZ_CHECK(!held, "after a restart '", name, "' is held, but no lease was live");
      continue;
    }
    FUZZ_CHECK(held && it->second.token == r.lease->token, "lease ", r.lease->token,
               " on '", name, "' did not survive a restart");
    // The TTL asked for, capped by max_hold from the restart.
    auto capped = [this](absl::Duration ttl) {
      return limits_.max_hold > absl::ZeroDuration() ? std::min(ttl, limits_.max_hold) : ttl;
    };
    const absl::Duration ttl = it->second.remaining;
    FUZZ_CHECK(ttl >= capped(r.lease->ttl_low) && ttl <= capped(r.lease->ttl_high) &&
                   it->second.hold_count == r.lease->holds,
               "after a restart '", name, "' is held for ", Show(ttl), " with ",
               it->second.hold_count, " holds; asked: ", Show(r.lease->ttl_low), " to ",
               Show(r.lease->ttl_high), ", ", r.lease->holds, " holds");
    r.lease->expiry = now + ttl;
    r.lease->ttl_low = r.lease->ttl_high = ttl;
  }
}

std::map<std::string, uint64_t> LockModel::Held() const {
  std::map<std::string, uint64_t> held;
  for (const auto& [name, r] : resources_) {
    if (r.lease) held[name] = r.lease->token;
  }
  return held;
}

}  // namespace fencegate::fuzz
