// The lock service's planted bugs (docs/torture.md, "Planted bugs"), in the
// torture suite's test builds only: tests/torture/CMakeLists.txt links this
// file in place of lockservice/core/lock_manager_seams.cc. It defines the same
// four link seams of LockManager (lock_manager.h) around the same calls;
// without --planted_bug, or with a bug of another part, each does exactly
// what the production one does.
//
//   TestBuildStore   wraps the store for the two bugs of the durable half
//                    (PlantedBugLockStore below);
//   CanGrant         bends the grant rule's facts (grant_rule.h);
//   LeaseOfToken     finds a lease for a Proclaim whose term has ended;
//   RefuseTryMany    grants the free resources of a refused multi try-lock.
//
// Thread safety: as LockManager and LockStore.
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/test_hooks/test_hooks.h"
#include "lockservice/core/grant_rule.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::lockservice {
namespace {

// The store as the manager sees it with one of two bugs planted:
//   lock_leases_forgotten_on_restart: a load hands over the token counter
//       and the waiters but no lease;
//   lock_token_replied_before_commit: Commit() answers OK at once and
//       commits in the background, so the manager answers a batch before
//       it is durable. A crash meanwhile takes back the tokens it handed
//       out; a failed commit is told only at the next Commit(), which then
//       fails without committing its own batch (the manager reloads).
class PlantedBugLockStore final : public LockStore {
 public:
  enum class Bug { kLeasesForgottenOnRestart, kTokenRepliedBeforeCommit };

  PlantedBugLockStore(LockStore* inner, Bug bug) : inner_(inner), bug_(bug) {}
  ~PlantedBugLockStore() override { FinishCommit().IgnoreError(); }

  absl::StatusOr<LockStoreState> Load() override {
    FinishCommit().IgnoreError();
    absl::StatusOr<LockStoreState> state = inner_->Load();
    if (state.ok() && bug_ == Bug::kLeasesForgottenOnRestart) state->leases.clear();
    return state;
  }

  absl::Status LoadInto(LoadSink& sink) override {
    FinishCommit().IgnoreError();
    if (bug_ != Bug::kLeasesForgottenOnRestart) return inner_->LoadInto(sink);
    LeaselessSink leaseless(sink);
    return inner_->LoadInto(leaseless);
  }

  absl::Status Commit(const LockStoreBatch& batch) override {
    if (bug_ != Bug::kTokenRepliedBeforeCommit) return inner_->Commit(batch);
    if (absl::Status previous = FinishCommit(); !previous.ok()) return previous;
    pending_ = std::async(std::launch::async,
                          [inner = inner_, batch] { return inner->Commit(batch); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(uint64_t after,
                                                                size_t limit) override {
    return inner_->ScanFencePositions(after, limit);
  }

 private:
  // Passes on everything but the leases.
  class LeaselessSink final : public LoadSink {
   public:
    explicit LeaselessSink(LoadSink& inner) : inner_(inner) {}
    void OnLastToken(uint64_t last_token) override { inner_.OnLastToken(last_token); }
    void ExpectLeases(size_t count) override { inner_.ExpectLeases(count); }
    void OnLease(LeaseRecord& /*lease*/) override {}
    void OnWaiter(WaiterRecord& waiter) override { inner_.OnWaiter(waiter); }

   private:
    LoadSink& inner_;
  };

  // Waits for the commit under way in the background, if any: its outcome.
  absl::Status FinishCommit() {
    if (!pending_.valid()) return absl::OkStatus();
    return pending_.get();
  }

  LockStore* const inner_;
  const Bug bug_;
  // kTokenRepliedBeforeCommit: the commit under way. Only the manager's one
  // caller of Commit() and Load() touches it.
  std::future<absl::Status> pending_;
};

}  // namespace

std::unique_ptr<LockStore> LockManager::TestBuildStore(LockStore* store) {
  using Bug = PlantedBugLockStore::Bug;
  if (test_hooks::PlantedBug("lock_leases_forgotten_on_restart")) {
    return std::make_unique<PlantedBugLockStore>(store, Bug::kLeasesForgottenOnRestart);
  }
  if (test_hooks::PlantedBug("lock_token_replied_before_commit")) {
    return std::make_unique<PlantedBugLockStore>(store, Bug::kTokenRepliedBeforeCommit);
  }
  return nullptr;
}

bool LockManager::CanGrant(const ResourceState& r, const std::string& holder,
                           LeaseMode mode) const {
  GrantFacts facts = r.FactsFor(holder, clock_->Now(), limits_.max_holders_per_resource);
  // lock_shared_beside_exclusive: a reader is let in beside a writer.
  if (mode == LeaseMode::kShared &&
      test_hooks::PlantedBug("lock_shared_beside_exclusive")) {
    facts.exclusive_held = false;
  }
  // lock_permit_past_n: a semaphore of N permits grants one more.
  if (test_hooks::PlantedBug("lock_permit_past_n")) ++facts.permits;
  return GrantAllowed(mode, facts);
}

HeldLease* LockManager::LeaseOfToken(absl::string_view op, ResourceState& r,
                                     uint64_t token) {
  HeldLease* lease = r.FindLease(token);
  // lock_proclaim_after_term: a Proclaim whose term has ended speaks for
  // the term that leads now.
  if (lease == nullptr && op == "proclaim" && r.lease.has_value() &&
      test_hooks::PlantedBug("lock_proclaim_after_term")) {
    return &*r.lease;
  }
  return lease;
}

void LockManager::RefuseTryMany(const MultiAcquireArgs& args,
                                const std::vector<ResourceState*>& rs, size_t busy,
                                Callback<MultiAcquireResult> done) {
  // lock_multi_partial_grant: the free resources before the taken one are
  // granted anyway, answered to nobody, and the call is told "not acquired".
  if (test_hooks::PlantedBug("lock_multi_partial_grant")) {
    for (size_t i = 0; i < busy; ++i) {
      Grant(args.resources[i], *rs[i], args.holder, args.mode, args.ttl,
            args.request_id, [](absl::StatusOr<AcquireResult>) {}, args.listener);
    }
  }
  ReplyTryManyRefused(args.resources[busy], *rs[busy], std::move(done));
}

}  // namespace fencegate::lockservice
