// The LockManager test fixture (tests/unit/lock_manager_*_test.cc,
// fence_positions_test.cc): a manager on a FakeClock over each store
// (StoreUnderTest: SQLite, and etcd as the leader of a term, where a restart
// is a new leader's term), with helpers that call it and wait for the
// reply, and the names those tests share (Seconds, IsOk, StatusIs,
// HasSubstr). Replies are delivered after group commit, so each helper
// calls Sync() before reading results; no test sleeps.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_MANAGER_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_LOCK_MANAGER_FIXTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_manager.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {

using ::absl::Milliseconds;
using ::absl::Seconds;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

// A reply slot filled by a manager callback on the commit thread.
template <typename T>
class Slot {
 public:
  void Set(absl::StatusOr<T> value) {
    absl::MutexLock lock(&mu_);
    value_ = std::move(value);
  }
  bool done() {
    absl::MutexLock lock(&mu_);
    return value_.has_value();
  }
  absl::StatusOr<T> get() {
    absl::MutexLock lock(&mu_);
    if (!value_) return absl::InternalError("no reply yet");
    return *value_;
  }

 private:
  absl::Mutex mu_;
  std::optional<absl::StatusOr<T>> value_;
};

template <typename T>
using SlotPtr = std::shared_ptr<Slot<T>>;

inline AcquireArgs Args(std::string resource, std::string holder,
                 absl::Duration ttl = absl::Seconds(10),
                 absl::Duration wait = absl::ZeroDuration(),
                 std::string request_id = "") {
  return AcquireArgs{std::move(resource), std::move(holder), ttl, wait,
                     std::move(request_id)};
}

class LockManagerTest : public ::testing::TestWithParam<testing::StoreKind> {
 protected:
  void SetUp() override {
    stores_ = testing::StoreUnderTest::Make(GetParam(), dir_.path());
    Start();
  }

  void Start() {
    if (store_ == nullptr) {
      auto store = stores_->Open();
      ASSERT_THAT(store, ::fencegate::testing::IsOk());
      store_ = *std::move(store);
      faulty_ = std::make_unique<testing::FaultyLockStore>(store_.get());
    }
    auto manager = LockManager::Create(faulty_.get(), &clock_, limits_, fence_feed_);
    ASSERT_THAT(manager, ::fencegate::testing::IsOk());
    manager_ = *std::move(manager);
  }

  // Simulates a crash and restart on the same stored state. The manager is
  // dropped without any further write, as a killed process would be.
  void Restart() {
    manager_.reset();
    faulty_.reset();
    store_.reset();
    Start();
  }

  SlotPtr<AcquireResult> StartAcquire(AcquireArgs args,
                                      LockManager::CallId* id = nullptr) {
    auto slot = std::make_shared<Slot<AcquireResult>>();
    LockManager::CallId call = manager_->NewCallId();
    if (id != nullptr) *id = call;
    manager_->Acquire(call, std::move(args),
                      [slot](absl::StatusOr<AcquireResult> r) { slot->Set(std::move(r)); });
    return slot;
  }

  absl::StatusOr<AcquireResult> Acquire(AcquireArgs args) {
    auto slot = StartAcquire(std::move(args));
    manager_->Sync();
    return slot->get();
  }

  // Acquires and insists on success; returns the token.
  uint64_t MustAcquire(const std::string& resource, const std::string& holder,
                       absl::Duration ttl = absl::Seconds(10)) {
    absl::StatusOr<AcquireResult> r = Acquire(Args(resource, holder, ttl));
    EXPECT_THAT(r, ::fencegate::testing::IsOk());
    if (!r.ok()) return 0;
    EXPECT_TRUE(r->acquired) << resource << " not acquired by " << holder;
    return r->token;
  }

  absl::StatusOr<RenewResult> Renew(const std::string& resource, uint64_t token,
                                    absl::Duration ttl) {
    auto slot = std::make_shared<Slot<RenewResult>>();
    manager_->Renew(RenewArgs{resource, token, ttl, ""},
                    [slot](absl::StatusOr<RenewResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  }

  absl::StatusOr<ReleaseResult> Release(const std::string& resource, uint64_t token,
                                        const std::string& request_id = "") {
    auto slot = std::make_shared<Slot<ReleaseResult>>();
    manager_->Release(ReleaseArgs{resource, token, request_id, ""},
                      [slot](absl::StatusOr<ReleaseResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  }

  ResourceInfo Describe(const std::string& resource) {
    auto slot = std::make_shared<Slot<ResourceInfo>>();
    manager_->Describe(resource,
                       [slot](absl::StatusOr<ResourceInfo> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    absl::StatusOr<ResourceInfo> info = slot->get();
    EXPECT_THAT(info, ::fencegate::testing::IsOk());
    return info.ok() ? *info : ResourceInfo{};
  }

  // Moves the fake clock and waits until the replies it caused are out.
  void Advance(absl::Duration d) {
    clock_.AdvanceBy(d);
    manager_->Sync();
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  LockLimits limits_;
  // Where the manager publishes fence positions (none unless a test sets it
  // before Start(); it must outlive manager_).
  FenceFeed* fence_feed_ = nullptr;
  std::unique_ptr<testing::StoreUnderTest> stores_;
  std::unique_ptr<LockStore> store_;
  std::unique_ptr<testing::FaultyLockStore> faulty_;
  std::unique_ptr<LockManager> manager_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_TESTS_UNIT_LOCK_MANAGER_FIXTURE_H_
