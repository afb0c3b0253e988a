// Renew, Release and Proclaim: the owner-checked calls on a held lease.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "lockservice/core/lock_call_validation.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {
namespace {

// The LeaseLost error for `op` with `token` on `resource` (`r`, may be
// null), naming who holds it now.
absl::Status LeaseLost(absl::string_view op, const std::string& resource, uint64_t token,
                       const ResourceState* r) {
  const HeldLease* oldest = r != nullptr ? r->Oldest() : nullptr;
  const uint64_t holder_token = oldest != nullptr ? oldest->token : 0;
  std::string now_held = holder_token == 0
                             ? std::string("nobody holds it now")
                             : absl::StrCat("it is held with token ", holder_token);
  return LeaseLostError(
      absl::StrCat("lease lost: cannot ", op, " resource '", resource, "' with token ",
                   token, ": ", now_held, ". Stop writing and acquire the lock again"),
      holder_token);
}

// The error for a call whose token holds `lease` but whose `caller` is not
// its owner (HeldBy), or OK.
absl::Status CheckOwner(absl::string_view op, const std::string& resource,
                        const HeldLease& lease, const std::string& caller) {
  if (caller.empty() || HeldBy(lease.holder, caller)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "cannot ", op, " resource '", resource, "' with token ", lease.token,
      ": the lease belongs to '", lease.holder, "', and your certificate says '", caller,
      "'; only the holder may renew or release its lease"));
}

}  // namespace

template <typename Result, typename Decide>
void LockManager::OnHeldLease(absl::string_view op, LockManagerMetrics::LeaseLostOp lost,
                              const std::string& resource, uint64_t token,
                              const std::string& caller, absl::Status error,
                              Callback<Result> done, Decide decide) {
  if (error.ok()) error = CheckBacklog(commits_->PendingGroups(), limits_);
  if (error.ok()) {
    CommitArrival arrival = Arriving();  // the decision's items commit together
    DecisionLock lock(this);
    error = broken_;
    if (error.ok()) {
      absl::StatusOr<Held> held = FindHeld(op, resource, token, caller);
      if (!held.ok()) {
        if (held.status().code() == absl::StatusCode::kAborted) {
          Count(metrics_->lease_lost[lost]);
        }
        decision_.Reply(std::move(done), absl::StatusOr<Result>(held.status()));
      } else {
        decision_.Reply(std::move(done),
                        absl::StatusOr<Result>(decide(*held->resource, *held->lease)));
      }
      MaybeForget(resource);
    }
  }
  if (!error.ok()) done(error);
}

void LockManager::Renew(RenewArgs args, Callback<RenewResult> done) {
  OnHeldLease("renew", LockManagerMetrics::kRenew, args.resource, args.token, args.caller,
              ValidateRenew(args, limits_), std::move(done),
              [&](ResourceState& r, HeldLease& lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                const absl::Time now = clock_->Now();
                expiries_.Move(lease,
                               CappedExpiry(lease, args.ttl, clock_->Now(),
                                            limits_.max_hold));  // extend TO, not by
                if (args.ttl > lease.ttl.get()) {
                  lease.ttl = CompactDuration(args.ttl);
                  decision_.PutLease(args.resource, r, lease);
                }
                Count(metrics_->renewals);
                if (args.listener != nullptr) {
                  listeners_.Listen(args.listener, lease.token, lease.first_listener);
                }
                return RenewResult{lease.expiry.get() - now};
              });
}

void LockManager::Release(ReleaseArgs args, Callback<ReleaseResult> done) {
  OnHeldLease(
      "release", LockManagerMetrics::kRelease, args.resource, args.token, args.caller,
      ValidateRelease(args, limits_), std::move(done),
      [&](ResourceState& r, HeldLease& lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        const bool retry =
            !args.request_id.empty() && lease.request_ids.Contains(args.request_id);
        if (args.resign) {
          lease.hold_count = 0;  // a Resign ends the term, whatever its holds
        } else if (!retry) {
          --lease.hold_count;
          lease.request_ids.Remember(args.request_id, limits_.remembered_request_ids);
        }
        const uint32_t left = lease.hold_count;
        if (left == 0) {
          EndLease(args.resource, r, lease, LeaseEnd::kReleased, args.listener);
        } else if (!retry) {
          decision_.PutLease(args.resource, r, lease);
        }
        return ReleaseResult{left};
      });
}

void LockManager::Proclaim(ProclaimArgs args, Callback<ProclaimResult> done) {
  OnHeldLease(
      "proclaim", LockManagerMetrics::kRenew, args.resource, args.token, args.caller,
      ValidateProclaim(args, limits_), std::move(done),
      [&](ResourceState& r, HeldLease& lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
          mu_) -> absl::StatusOr<ProclaimResult> {
        if (lease.mode != LeaseMode::kExclusive) {
          return InvalidFieldError(
              "term",
              absl::StrCat("term: ", args.token, " is a ", LeaseModeName(lease.mode),
                           " lease of '", args.resource,
                           "'; only its exclusive lease leads the election"));
        }
        const uint64_t seq =
            elections_.Proclaim(args.resource, lease.token, std::move(args.value)).seq;
        decision_.PutLease(args.resource, r, lease);
        if (!elections_.ObserversOf(args.resource).empty()) {
          TellObservers(ElectionState(args.resource, &r));
        }
        return ProclaimResult{seq};
      });
}

absl::StatusOr<LockManager::Held> LockManager::FindHeld(absl::string_view op,
                                                        const std::string& resource,
                                                        uint64_t token,
                                                        const std::string& caller) {
  ResourceState* r = FindCurrent(resource);
  HeldLease* lease = r != nullptr ? LeaseOfToken(op, *r, token) : nullptr;
  if (lease == nullptr) return LeaseLost(op, resource, token, r);
  absl::Status owner = CheckOwner(op, resource, *lease, caller);
  if (!owner.ok()) return owner;
  return Held{r, lease};
}

bool HeldBy(absl::string_view holder, absl::string_view caller) {
  return holder == caller ||
         (holder.size() > caller.size() && absl::StartsWith(holder, caller) &&
          holder[caller.size()] == '/');
}

}  // namespace fencegate::lockservice
