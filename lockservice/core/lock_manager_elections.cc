// Elections (elections.h): the leader as committed, and who observes it.
// Campaign, Resign and Proclaim go through Acquire, Release and the held
// lease's path (lock_manager.cc, lock_manager_renew_release.cc).
#include <string>
#include <utility>
#include <vector>

#include "common/core/validation.h"
#include "lockservice/core/lock_call_validation.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {

void LockManager::Leader(std::string election, Callback<ElectionChange> done) {
  absl::Status error = ValidateName("election", election, limits_.max_resource_bytes);
  if (error.ok()) error = CheckBacklog(commits_->PendingGroups(), limits_);
  if (error.ok()) {
    DecisionLock lock(this);
    error = broken_;
    if (error.ok()) {
      const ResourceState* r = FindCurrent(election);
      decision_.Reply(std::move(done),
                      absl::StatusOr<ElectionChange>(ElectionState(election, r)));
      MaybeForget(election);
    }
  }
  if (!error.ok()) done(error);
}

absl::Status LockManager::AddObserver(const std::string& election,
                                      ElectionObserver* observer) {
  absl::Status error = ValidateName("election", election, limits_.max_resource_bytes);
  if (!error.ok()) return error;
  DecisionLock lock(this);
  if (shutting_down_) return ShuttingDownError();
  if (!broken_.ok()) return broken_;
  const ResourceState* r = FindCurrent(election);
  elections_.Observe(election, observer);
  // Its first change is the state now, told after what was decided before
  // it commits (the state holds those decisions already).
  decision_.TellChange(observer, ElectionState(election, r));
  MaybeForget(election);
  return absl::OkStatus();
}

void LockManager::RemoveObserver(const std::string& election,
                                 ElectionObserver* observer) {
  bool removed;
  {
    absl::MutexLock lock(&mu_);
    removed = elections_.Unobserve(election, observer);
  }
  if (removed) observer->Unref();
}

ElectionChange LockManager::ElectionState(const std::string& name,
                                          const ResourceState* r) {
  ElectionChange state;
  state.election = name;
  state.at = absl::Now();
  if (r != nullptr && r->lease) {
    const HeldLease& lease = *r->lease;
    state.leader = true;
    state.term = lease.token;
    state.holder = lease.holder;
    state.remaining = lease.expiry.get() - clock_->Now();
    if (const Proclamation* said = elections_.Find(name, lease.token)) {
      state.seq = said->seq;
      state.value = said->value;
    }
    return state;
  }
  std::tie(state.term, state.seq) = elections_.LastEnd(name);
  return state;
}

void LockManager::TellObservers(const ElectionChange& change) {
  for (ElectionObserver* observer : elections_.ObserversOf(change.election)) {
    decision_.TellChange(observer, change);
  }
}

}  // namespace fencegate::lockservice
