#include "lockservice/server/standby_shadow.h"

#include "common/test_hooks/test_hooks.h"

#ifdef FENCEGATE_TEST_HOOKS
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/server/lock_service.h"
#endif

namespace fencegate::lockservice {

#ifdef FENCEGATE_TEST_HOOKS
namespace {

// A LockStore in memory: what the shadow's own state lives in.
class MemoryLockStore final : public LockStore {
 public:
  absl::StatusOr<LockStoreState> Load() override {
    absl::MutexLock lock(&mu_);
    LockStoreState state;
    state.last_token = last_token_;
    for (const auto& [resource, lease] : leases_) state.leases.push_back(lease);
    for (const auto& [token, hold] : holds_) state.leases.push_back(hold);
    return state;
  }

  absl::Status Commit(const LockStoreBatch& batch) override {
    absl::MutexLock lock(&mu_);
    last_token_ = std::max(last_token_, batch.last_token);
    for (const auto& [resource, lease] : batch.leases) {
      if (lease) {
        leases_[resource] = *lease;
      } else {
        leases_.erase(resource);
      }
    }
    for (const auto& [token, hold] : batch.holds) {
      if (hold) {
        holds_[token] = *hold;
      } else {
        holds_.erase(token);
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(uint64_t,
                                                                size_t) override {
    return std::vector<FencePosition>();
  }

 private:
  absl::Mutex mu_;
  uint64_t last_token_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, LeaseRecord> leases_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, LeaseRecord> holds_ ABSL_GUARDED_BY(mu_);  // by token
};

// The store and the manager, alive as long as the service.
struct Shadow {
  MemoryLockStore store;
  std::unique_ptr<LockManager> manager;
};

}  // namespace
#endif

std::shared_ptr<LockServiceBase> MakeStandbyShadow(Clock* clock, const LockLimits& limits,
                                                   const TokenSigner* signer) {
#ifdef FENCEGATE_TEST_HOOKS
  if (!FENCEGATE_PLANTED_BUG("lock_standby_answers_locally")) return nullptr;
  auto shadow = std::make_shared<Shadow>();
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(&shadow->store, clock, limits);
  if (!manager.ok()) return nullptr;
  shadow->manager = *std::move(manager);
  std::shared_ptr<LockManager> shared(shadow, shadow->manager.get());
  return std::make_shared<LockServiceImpl>(std::move(shared), &shadow->store, nullptr,
                                           signer, CallerIdentity());
#else
  (void)clock;
  (void)limits;
  (void)signer;
  return nullptr;
#endif
}

}  // namespace fencegate::lockservice
