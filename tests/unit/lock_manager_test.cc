// LockManager semantics on a FakeClock: no test sleeps. Replies are delivered
// after group commit, so each helper calls Sync() before reading results.
// Every test runs on each store (StoreUnderTest): SQLite, and etcd as the
// leader of a term, where a restart is a new leader's term.
#include "lockservice/lock_manager.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

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

AcquireArgs Args(std::string resource, std::string holder,
                 absl::Duration ttl = Seconds(10),
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
      ASSERT_THAT(store, IsOk());
      store_ = *std::move(store);
      faulty_ = std::make_unique<testing::FaultyLockStore>(store_.get());
    }
    auto manager = LockManager::Create(faulty_.get(), &clock_, limits_);
    ASSERT_THAT(manager, IsOk());
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
                       absl::Duration ttl = Seconds(10)) {
    absl::StatusOr<AcquireResult> r = Acquire(Args(resource, holder, ttl));
    EXPECT_THAT(r, IsOk());
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
    EXPECT_THAT(info, IsOk());
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
  std::unique_ptr<testing::StoreUnderTest> stores_;
  std::unique_ptr<LockStore> store_;
  std::unique_ptr<testing::FaultyLockStore> faulty_;
  std::unique_ptr<LockManager> manager_;
};

TEST_P(LockManagerTest, TryLockGrantsFreeResource) {
  ASSERT_OK_AND_ASSIGN(AcquireResult r, Acquire(Args("r", "alice", Seconds(5))));
  EXPECT_TRUE(r.acquired);
  EXPECT_EQ(r.token, 1u);
  EXPECT_EQ(r.ttl, Seconds(5));
  EXPECT_EQ(r.hold_count, 1u);
}

TEST_P(LockManagerTest, TryLockOnHeldResourceAnswersNotAcquiredWithHolderToken) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(5));
  clock_.AdvanceBy(Seconds(2));
  ASSERT_OK_AND_ASSIGN(AcquireResult r, Acquire(Args("r", "bob")));
  EXPECT_FALSE(r.acquired);
  EXPECT_EQ(r.reason, NotAcquiredReason::kHeld);
  EXPECT_EQ(r.holder_token, alice);
  EXPECT_EQ(r.retry_after, Seconds(3));
  EXPECT_EQ(r.token, 0u);
}

TEST_P(LockManagerTest, TokensStrictlyIncreaseOverAllGrants) {
  uint64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    std::string resource = "r" + std::to_string(i % 3);
    uint64_t token = MustAcquire(resource, "h" + std::to_string(i));
    EXPECT_GT(token, last);
    last = token;
    ASSERT_THAT(Release(resource, token), IsOk());
  }
}

TEST_P(LockManagerTest, LeaseExpiresExactlyAtTtl) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(1));
  Advance(Milliseconds(999));
  EXPECT_TRUE(Describe("r").held);
  EXPECT_EQ(Describe("r").remaining, Milliseconds(1));
  Advance(Milliseconds(1));
  EXPECT_FALSE(Describe("r").held);
  EXPECT_GT(MustAcquire("r", "bob"), alice);
}

TEST_P(LockManagerTest, ExpiredLeaseIsGoneEvenBeforeItsTimerRuns) {
  // A call that arrives at the expiry instant must not see the lease held,
  // whatever order the timer and the call run in.
  uint64_t alice = MustAcquire("r", "alice", Seconds(1));
  clock_.AdvanceBy(Seconds(1));
  EXPECT_THAT(Renew("r", alice, Seconds(10)), StatusIs(absl::StatusCode::kAborted));
}

TEST_P(LockManagerTest, RenewExtendsToNowPlusTtlNeverBeyond) {
  uint64_t token = MustAcquire("r", "alice", Seconds(10));
  for (int i = 0; i < 50; ++i) {
    Advance(Seconds(1));
    ASSERT_OK_AND_ASSIGN(RenewResult renewed, Renew("r", token, Seconds(10)));
    EXPECT_EQ(renewed.ttl, Seconds(10));
    EXPECT_EQ(Describe("r").remaining, Seconds(10)) << "after renew " << i;
  }
  Advance(Seconds(10) - Milliseconds(1));
  EXPECT_TRUE(Describe("r").held);
  Advance(Milliseconds(1));
  EXPECT_FALSE(Describe("r").held);
}

TEST_P(LockManagerTest, RenewWithShorterTtlShortensTheLease) {
  uint64_t token = MustAcquire("r", "alice", Seconds(10));
  ASSERT_THAT(Renew("r", token, Seconds(2)), IsOk());
  Advance(Seconds(2));
  EXPECT_FALSE(Describe("r").held);
}

// Found by the random sequences (lock_sequence.h): a renewal that shortened
// a lease left its expiry timer at the old, later expiry, so the next waiter
// was granted (and the expiry published for grant-time fencing) only then,
// or when some call on the resource happened to notice the lease was gone.
TEST_P(LockManagerTest, RenewThatShortensTheLeaseHandsItOnAtTheNewExpiry) {
  uint64_t token = MustAcquire("r", "alice", Seconds(10));
  auto waiter = StartAcquire(Args("r", "bob", Seconds(10), Seconds(60)));
  ASSERT_THAT(Renew("r", token, Seconds(2)), IsOk());
  Advance(Seconds(2) - Milliseconds(1));
  EXPECT_FALSE(waiter->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(waiter->done()) << "not handed on at the shortened expiry";
  ASSERT_OK_AND_ASSIGN(AcquireResult r, waiter->get());
  EXPECT_TRUE(r.acquired);
  EXPECT_GT(r.token, token);
}

TEST_P(LockManagerTest, StaleRenewIsAbortedAndLeavesNewHolderIntact) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(1));
  Advance(Seconds(1));
  uint64_t bob = MustAcquire("r", "bob", Seconds(10));
  Advance(Seconds(3));

  absl::StatusOr<RenewResult> renew = Renew("r", alice, Seconds(60));
  EXPECT_THAT(renew, StatusIs(absl::StatusCode::kAborted, HasSubstr("lease lost")));
  std::optional<ErrorInfo> info = GetErrorInfo(renew.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason, ErrorReason::kLeaseLost);
  EXPECT_EQ(info->current_token, bob);

  ResourceInfo now = Describe("r");
  EXPECT_EQ(now.holder, "bob");
  EXPECT_EQ(now.token, bob);
  EXPECT_EQ(now.remaining, Seconds(7));  // untouched by alice's renew
}

TEST_P(LockManagerTest, StaleReleaseIsAbortedAndNeverFreesNewHolder) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(1));
  Advance(Seconds(1));
  uint64_t bob = MustAcquire("r", "bob", Seconds(10));

  absl::StatusOr<ReleaseResult> release = Release("r", alice);
  EXPECT_THAT(release, StatusIs(absl::StatusCode::kAborted, HasSubstr("lease lost")));
  EXPECT_EQ(GetErrorInfo(release.status())->current_token, bob);
  ResourceInfo now = Describe("r");
  EXPECT_TRUE(now.held);
  EXPECT_EQ(now.token, bob);
  EXPECT_EQ(now.hold_count, 1u);
}

TEST_P(LockManagerTest, ReleasingTwiceIsHarmless) {
  uint64_t token = MustAcquire("r", "alice");
  ASSERT_OK_AND_ASSIGN(ReleaseResult first, Release("r", token));
  EXPECT_EQ(first.hold_count, 0u);
  uint64_t bob = MustAcquire("r", "bob");
  EXPECT_THAT(Release("r", token), StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(Describe("r").token, bob);
}

TEST_P(LockManagerTest, ReentrantAcquireKeepsTokenAndCountsHolds) {
  uint64_t token = MustAcquire("r", "alice");
  ASSERT_OK_AND_ASSIGN(AcquireResult again, Acquire(Args("r", "alice")));
  EXPECT_TRUE(again.acquired);
  EXPECT_EQ(again.token, token);
  EXPECT_EQ(again.hold_count, 2u);

  ASSERT_OK_AND_ASSIGN(ReleaseResult one, Release("r", token));
  EXPECT_EQ(one.hold_count, 1u);
  EXPECT_TRUE(Describe("r").held);
  ASSERT_OK_AND_ASSIGN(ReleaseResult two, Release("r", token));
  EXPECT_EQ(two.hold_count, 0u);
  EXPECT_FALSE(Describe("r").held);
}

TEST_P(LockManagerTest, ReentrantAcquireNeverShortensTheLease) {
  MustAcquire("r", "alice", Seconds(30));
  ASSERT_OK_AND_ASSIGN(AcquireResult again, Acquire(Args("r", "alice", Seconds(1))));
  EXPECT_EQ(again.ttl, Seconds(30));
}

TEST_P(LockManagerTest, RetriedRequestIdDoesNotDoubleTheHoldCount) {
  ASSERT_OK_AND_ASSIGN(AcquireResult first,
                       Acquire(Args("r", "alice", Seconds(10), absl::ZeroDuration(), "req-1")));
  ASSERT_OK_AND_ASSIGN(AcquireResult retry,
                       Acquire(Args("r", "alice", Seconds(10), absl::ZeroDuration(), "req-1")));
  EXPECT_EQ(retry.token, first.token);
  EXPECT_EQ(retry.hold_count, 1u);
  ASSERT_OK_AND_ASSIGN(AcquireResult second,
                       Acquire(Args("r", "alice", Seconds(10), absl::ZeroDuration(), "req-2")));
  EXPECT_EQ(second.hold_count, 2u);

  ASSERT_OK_AND_ASSIGN(ReleaseResult rel, Release("r", first.token, "rel-1"));
  EXPECT_EQ(rel.hold_count, 1u);
  ASSERT_OK_AND_ASSIGN(ReleaseResult rel_retry, Release("r", first.token, "rel-1"));
  EXPECT_EQ(rel_retry.hold_count, 1u);
  EXPECT_TRUE(Describe("r").held);
}

TEST_P(LockManagerTest, WaitersAreGrantedInArrivalOrder) {
  uint64_t token = MustAcquire("r", "holder");
  std::vector<SlotPtr<AcquireResult>> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.push_back(StartAcquire(
        Args("r", "w" + std::to_string(i), Seconds(10), Seconds(60))));
  }
  manager_->Sync();
  EXPECT_EQ(Describe("r").waiters, 5u);
  for (int i = 0; i < 5; ++i) {
    for (int j = i; j < 5; ++j) EXPECT_FALSE(waiters[j]->done()) << j;
    ASSERT_THAT(Release("r", token), IsOk());
    ASSERT_TRUE(waiters[i]->done()) << "waiter " << i << " not granted";
    ASSERT_OK_AND_ASSIGN(AcquireResult r, waiters[i]->get());
    EXPECT_TRUE(r.acquired);
    EXPECT_GT(r.token, token);
    EXPECT_EQ(Describe("r").holder, "w" + std::to_string(i));
    token = r.token;
  }
}

TEST_P(LockManagerTest, TryLockDoesNotJumpTheQueue) {
  uint64_t token = MustAcquire("r", "holder", Seconds(1));
  auto waiter = StartAcquire(Args("r", "patient", Seconds(10), Seconds(60)));
  Advance(Seconds(1));  // expiry hands the lock to the waiter, not to a newcomer
  ASSERT_TRUE(waiter->done());
  EXPECT_TRUE(waiter->get()->acquired);
  EXPECT_GT(waiter->get()->token, token);
  ASSERT_OK_AND_ASSIGN(AcquireResult late, Acquire(Args("r", "newcomer")));
  EXPECT_FALSE(late.acquired);
  EXPECT_EQ(late.holder_token, waiter->get()->token);
}

TEST_P(LockManagerTest, EndedLeasesLeaveNoTimersBehind) {
  for (int i = 0; i < 100; ++i) {
    uint64_t token = MustAcquire("r" + std::to_string(i % 7), "h", Seconds(60));
    ASSERT_THAT(Release("r" + std::to_string(i % 7), token), IsOk());
  }
  uint64_t renewed = MustAcquire("kept", "h", Seconds(2));
  for (int i = 0; i < 10; ++i) {
    Advance(Seconds(1));
    ASSERT_THAT(Renew("kept", renewed, Seconds(2)), IsOk());
  }
  EXPECT_EQ(clock_.PendingTimers(), 1u);  // only the live lease's
  ASSERT_THAT(Release("kept", renewed), IsOk());
  EXPECT_EQ(clock_.PendingTimers(), 0u);
}

TEST_P(LockManagerTest, ExpiryHandsTheLockToTheNextWaiter) {
  MustAcquire("r", "crashed", Seconds(2));
  auto waiter = StartAcquire(Args("r", "next", Seconds(10), Seconds(60)));
  Advance(Seconds(2) - Milliseconds(1));
  EXPECT_FALSE(waiter->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(waiter->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult r, waiter->get());
  EXPECT_TRUE(r.acquired);
  EXPECT_EQ(Describe("r").holder, "next");
}

TEST_P(LockManagerTest, WaitRunsOutWithNotAcquired) {
  uint64_t holder = MustAcquire("r", "holder", Seconds(60));
  auto waiter = StartAcquire(Args("r", "w", Seconds(10), Seconds(3)));
  Advance(Seconds(3) - Milliseconds(1));
  EXPECT_FALSE(waiter->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(waiter->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult r, waiter->get());
  EXPECT_FALSE(r.acquired);
  EXPECT_EQ(r.reason, NotAcquiredReason::kHeld);
  EXPECT_EQ(r.holder_token, holder);
  EXPECT_EQ(Describe("r").waiters, 0u);
}

TEST_P(LockManagerTest, CancelledWaiterLeavesTheQueue) {
  uint64_t token = MustAcquire("r", "holder");
  LockManager::CallId gone;
  auto first = StartAcquire(Args("r", "gone", Seconds(10), Seconds(60)), &gone);
  auto second = StartAcquire(Args("r", "stays", Seconds(10), Seconds(60)));
  manager_->CancelAcquire(gone);
  ASSERT_TRUE(first->done());
  EXPECT_THAT(first->get(), StatusIs(absl::StatusCode::kCancelled));
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(second->done());
  EXPECT_EQ(Describe("r").holder, "stays");
}

TEST_P(LockManagerTest, LockDelayHoldsBackAnExpiredResourceOnly) {
  limits_.lock_delay = Seconds(5);
  Restart();
  MustAcquire("r", "crashed", Seconds(1));
  Advance(Seconds(1));
  ASSERT_OK_AND_ASSIGN(AcquireResult during, Acquire(Args("r", "bob")));
  EXPECT_FALSE(during.acquired);
  EXPECT_EQ(during.reason, NotAcquiredReason::kLockDelay);
  EXPECT_EQ(during.retry_after, Seconds(5));
  EXPECT_EQ(Describe("r").lock_delay_remaining, Seconds(5));

  auto waiter = StartAcquire(Args("r", "waiter", Seconds(10), Seconds(60)));
  Advance(Seconds(5) - Milliseconds(1));
  EXPECT_FALSE(waiter->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(waiter->done());
  EXPECT_TRUE(waiter->get()->acquired);

  // A release is a clean hand-over: no delay.
  ASSERT_THAT(Release("r", waiter->get()->token), IsOk());
  EXPECT_TRUE(Acquire(Args("r", "bob"))->acquired);
}

TEST_P(LockManagerTest, MaxHoldCapsTheLeaseAcrossRenewals) {
  limits_.max_hold = Seconds(10);
  Restart();
  uint64_t token = MustAcquire("r", "alice", Seconds(4));
  Advance(Seconds(3));
  EXPECT_EQ(Renew("r", token, Seconds(4))->ttl, Seconds(4));
  Advance(Seconds(3));
  EXPECT_EQ(Renew("r", token, Seconds(4))->ttl, Seconds(4));
  Advance(Seconds(3));
  EXPECT_EQ(Renew("r", token, Seconds(4))->ttl, Seconds(1));  // capped at 10 s
  Advance(Seconds(1));
  EXPECT_FALSE(Describe("r").held);
}

// Found by the lock_service fuzz target: a restart re-armed a lease for its
// full persisted TTL (10 s) past the max_hold cap counted from the restart
// (5 s), so a renew between the two answered OK with a negative TTL, for a
// lease that was already over.
TEST_P(LockManagerTest, MaxHoldAlsoCapsALeaseReArmedByARestart) {
  limits_.max_hold = Seconds(5);
  Restart();
  uint64_t token = MustAcquire("r", "alice", Seconds(3));
  ASSERT_THAT(Renew("r", token, Seconds(10)), IsOk());  // persists a 10 s TTL
  Advance(Seconds(2));
  Restart();
  EXPECT_EQ(Describe("r").remaining, Seconds(5));
  Advance(Seconds(4));
  ASSERT_OK_AND_ASSIGN(RenewResult renewed, Renew("r", token, Seconds(3)));
  EXPECT_EQ(renewed.ttl, Seconds(1));  // capped at the restart + 5 s
  Advance(Seconds(1));
  EXPECT_FALSE(Describe("r").held);
  EXPECT_THAT(Renew("r", token, Seconds(3)), StatusIs(absl::StatusCode::kAborted));
}

TEST_P(LockManagerTest, WaiterLimitsAnswerResourceExhausted) {
  limits_.max_waiters_per_resource = 2;
  limits_.max_waiters_total = 3;
  Restart();
  MustAcquire("a", "holder");
  MustAcquire("b", "holder");
  StartAcquire(Args("a", "w1", Seconds(10), Seconds(60)));
  StartAcquire(Args("a", "w2", Seconds(10), Seconds(60)));
  EXPECT_THAT(Acquire(Args("a", "w3", Seconds(10), Seconds(60))),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("max_waiters_per_resource")));
  StartAcquire(Args("b", "w4", Seconds(10), Seconds(60)));
  EXPECT_THAT(Acquire(Args("b", "w5", Seconds(10), Seconds(60))),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("max_waiters_total")));
}

TEST_P(LockManagerTest, ShutdownEndsParkedWaitersWithUnavailable) {
  MustAcquire("r", "holder");
  auto waiter = StartAcquire(Args("r", "w", Seconds(10), Seconds(60)));
  manager_->Shutdown();
  ASSERT_TRUE(waiter->done());
  EXPECT_THAT(waiter->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Acquire(Args("other", "x")), StatusIs(absl::StatusCode::kUnavailable));
}

// ------------------------------------------------- durability and restarts

TEST_P(LockManagerTest, RestartReArmsEveryLeaseForItsFullTtl) {
  uint64_t token = MustAcquire("r", "alice", Seconds(10));
  ASSERT_OK_AND_ASSIGN(AcquireResult again,
                       Acquire(Args("r", "alice", Seconds(10), absl::ZeroDuration(), "req-9")));
  Advance(Seconds(8));
  Restart();

  ResourceInfo info = Describe("r");
  EXPECT_TRUE(info.held);
  EXPECT_EQ(info.holder, "alice");
  EXPECT_EQ(info.token, token);
  EXPECT_EQ(info.hold_count, 2u);
  EXPECT_EQ(info.remaining, Seconds(10));  // the "delay restart" rule
  EXPECT_FALSE(Acquire(Args("r", "bob"))->acquired);
  // The request id survived too: the retry adds no hold.
  ASSERT_OK_AND_ASSIGN(AcquireResult retry,
                       Acquire(Args("r", "alice", Seconds(10), absl::ZeroDuration(), "req-9")));
  EXPECT_EQ(retry.hold_count, 2u);
  EXPECT_EQ(again.token, token);
}

TEST_P(LockManagerTest, TokensAfterRestartExceedEveryTokenBefore) {
  uint64_t max_before = 0;
  for (int i = 0; i < 10; ++i) {
    uint64_t t = MustAcquire("r" + std::to_string(i), "h");
    max_before = std::max(max_before, t);
    ASSERT_THAT(Release("r" + std::to_string(i), t), IsOk());  // rows deleted
  }
  Restart();
  EXPECT_GT(MustAcquire("fresh", "h"), max_before);
}

TEST_P(LockManagerTest, RenewThatRaisesTheTtlIsDurable) {
  uint64_t token = MustAcquire("r", "alice", Seconds(2));
  ASSERT_THAT(Renew("r", token, Seconds(60)), IsOk());
  Restart();
  EXPECT_EQ(Describe("r").remaining, Seconds(60));
}

TEST_P(LockManagerTest, FailedCommitRevealsNoTokenAndLaterTokensStillGrow) {
  uint64_t before = MustAcquire("a", "alice");
  faulty_->FailNthCommit(1);
  absl::StatusOr<AcquireResult> failed = Acquire(Args("b", "bob"));
  EXPECT_THAT(failed, StatusIs(absl::StatusCode::kUnavailable,
                               HasSubstr("nothing was applied")));
  // The grant was rolled back with the commit: b is free, a still held.
  EXPECT_FALSE(Describe("b").held);
  EXPECT_EQ(Describe("a").token, before);
  uint64_t after = MustAcquire("b", "bob");
  EXPECT_GT(after, before);
  Restart();
  EXPECT_EQ(Describe("b").token, after);
  EXPECT_GT(MustAcquire("c", "carol"), after);
}

TEST_P(LockManagerTest, FailedCommitFailsEveryReplyDecidedOnItsState) {
  uint64_t holder = MustAcquire("r", "holder");
  auto waiter = StartAcquire(Args("r", "waiter", Seconds(10), Seconds(60)));
  manager_->Sync();
  faulty_->FailNthCommit(1);
  // The release commits nothing, so the hand-off to the waiter is undone too.
  EXPECT_THAT(Release("r", holder), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_TRUE(waiter->done());
  EXPECT_THAT(waiter->get(), StatusIs(absl::StatusCode::kUnavailable));
  ResourceInfo info = Describe("r");
  EXPECT_EQ(info.token, holder);  // the committed state: still held
  EXPECT_EQ(info.holder, "holder");
}

TEST_P(LockManagerTest, RequestsDecidedWhileAFailingCommitIsInFlightAreNotCommitted) {
  absl::Notification at_store, proceed;
  faulty_->HoldNextCommit(&at_store, &proceed);
  faulty_->FailNthCommit(1);
  // Whoever submits first commits (LeaderCommitQueue): let a second thread
  // lead, so this one can act while that commit is held at the store.
  SlotPtr<AcquireResult> first;
  std::thread leader([&] {
    first = StartAcquire(Args("b", "bob", absl::Seconds(10), absl::ZeroDuration(), "one"));
  });
  at_store.WaitForNotification();
  // Decided on state that includes the grant about to fail: a reentrant
  // hold on it, and a grant whose token comes after it.
  auto reentrant = StartAcquire(Args("b", "bob", absl::Seconds(10), absl::ZeroDuration(), "two"));
  auto other = StartAcquire(Args("c", "carol"));
  proceed.Notify();
  leader.join();
  manager_->Sync();
  EXPECT_THAT(first->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(reentrant->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(other->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_FALSE(Describe("b").held);
  EXPECT_FALSE(Describe("c").held);
  uint64_t dave = MustAcquire("b", "dave");
  Restart();  // and no ghost lease on disk either
  EXPECT_FALSE(Describe("c").held);
  EXPECT_EQ(Describe("b").token, dave);
  EXPECT_GT(MustAcquire("d", "erin"), dave);
}

TEST_P(LockManagerTest, StoreThatCannotReloadRefusesEverything) {
  MustAcquire("r", "holder");
  faulty_->FailNthCommit(1);
  faulty_->FailLoads(true);
  EXPECT_THAT(Acquire(Args("x", "y")), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Acquire(Args("z", "y")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("restart")));
}

// ---------------------------------------------------------------- bad input

struct BadAcquire {
  std::string name;
  AcquireArgs args;
  std::string field;
};

TEST_P(LockManagerTest, BadAcquireInputNamesTheField) {
  const std::string big(300, 'x');
  const absl::Duration ttl = Seconds(10);
  const absl::Duration wait = absl::ZeroDuration();
  std::vector<BadAcquire> cases = {
      {"empty resource", Args("", "h", ttl, wait), "resource"},
      {"long resource", Args(big, "h", ttl, wait), "resource"},
      {"control char", Args("a\nb", "h", ttl, wait), "resource"},
      {"empty holder", Args("r", "", ttl, wait), "holder"},
      {"long holder", Args("r", big, ttl, wait), "holder"},
      {"zero ttl", Args("r", "h", absl::ZeroDuration(), wait), "ttl_ms"},
      {"negative ttl", Args("r", "h", Seconds(-1), wait), "ttl_ms"},
      {"tiny ttl", Args("r", "h", Milliseconds(1), wait), "ttl_ms"},
      {"huge ttl", Args("r", "h", absl::Hours(24 * 365 * 1000), wait), "ttl_ms"},
      {"negative wait", Args("r", "h", ttl, Milliseconds(-5)), "wait_ms"},
      {"huge wait", Args("r", "h", ttl, absl::Hours(1000)), "wait_ms"},
      {"long request id", Args("r", "h", ttl, wait, big), "request_id"},
  };
  for (const BadAcquire& c : cases) {
    absl::StatusOr<AcquireResult> r = Acquire(c.args);
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.name;
    std::optional<ErrorInfo> info = GetErrorInfo(r.status());
    ASSERT_TRUE(info.has_value()) << c.name;
    EXPECT_EQ(info->field, c.field) << c.name;
  }
  EXPECT_FALSE(Describe("r").held);  // nothing was granted on the way
}

TEST_P(LockManagerTest, BadRenewReleaseDescribeInputNamesTheField) {
  uint64_t token = MustAcquire("r", "h");
  EXPECT_THAT(Renew("r", 0, Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token")));
  EXPECT_THAT(Renew("", token, Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  EXPECT_THAT(Renew("r", token, Seconds(-1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl_ms")));
  EXPECT_THAT(Renew("r", token, absl::Hours(100)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl_ms")));
  EXPECT_THAT(Release("r", 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token")));
  EXPECT_THAT(Release(std::string(1000, 'r'), token),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  EXPECT_THAT(Release("r", token, std::string(200, 'q')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request_id")));
  auto slot = std::make_shared<Slot<ResourceInfo>>();
  manager_->Describe("", [slot](absl::StatusOr<ResourceInfo> r) { slot->Set(r); });
  EXPECT_THAT(slot->get(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  // None of it touched the lease.
  EXPECT_EQ(Describe("r").hold_count, 1u);
  EXPECT_EQ(Describe("r").remaining, Seconds(10));
}

TEST_P(LockManagerTest, CertifiedCallerMayRenewAndReleaseOnlyItsOwnLease) {
  // Over mutual TLS the holder is "<certificate subject>/<name>".
  uint64_t token = MustAcquire("r", "CN=alice/worker-1");
  auto renew_as = [&](const std::string& caller) {
    auto slot = std::make_shared<Slot<RenewResult>>();
    manager_->Renew(RenewArgs{"r", token, Seconds(10), caller},
                    [slot](absl::StatusOr<RenewResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  };
  auto release_as = [&](const std::string& caller) {
    auto slot = std::make_shared<Slot<ReleaseResult>>();
    manager_->Release(ReleaseArgs{"r", token, "", caller},
                      [slot](absl::StatusOr<ReleaseResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  };
  EXPECT_THAT(renew_as("CN=mallory"), StatusIs(absl::StatusCode::kPermissionDenied,
                                               HasSubstr("belongs to 'CN=alice/worker-1'")));
  EXPECT_THAT(release_as("CN=ali"), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(Describe("r").token, token);  // untouched
  EXPECT_THAT(renew_as("CN=alice"), IsOk());
  EXPECT_THAT(release_as("CN=alice"), IsOk());
  EXPECT_FALSE(Describe("r").held);
  EXPECT_TRUE(HeldBy("CN=a", "CN=a"));
  EXPECT_FALSE(HeldBy("CN=ab/x", "CN=a"));
}


// ------------------------------------------ wait queues across restarts

// A parked Acquire with a request id, as the client library sends it.
AcquireArgs Waiting(std::string holder, std::string request_id) {
  return Args("r", std::move(holder), Seconds(10), Seconds(60), std::move(request_id));
}

TEST_P(LockManagerTest, WaitersKeepTheirPlacesAcrossARestart) {
  uint64_t token = MustAcquire("r", "holder", Seconds(30));
  for (int i = 0; i < 3; ++i) {
    StartAcquire(Waiting("w" + std::to_string(i), "id" + std::to_string(i)));
  }
  manager_->Sync();
  Restart();  // a crash, or a new leader: the calls died with it
  EXPECT_EQ(Describe("r").waiters, 3u);
  // The clients retry, in another order than they queued.
  auto w2 = StartAcquire(Waiting("w2", "id2"));
  auto w0 = StartAcquire(Waiting("w0", "id0"));
  auto late = StartAcquire(Waiting("late", "id-late"));  // behind all three
  manager_->Sync();
  EXPECT_EQ(Describe("r").waiters, 4u);
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(w0->done());
  ASSERT_TRUE(w0->get()->acquired);
  // w1 has not retried yet: its turn waits for it, w2 does not jump it.
  ASSERT_THAT(Release("r", w0->get()->token), IsOk());
  EXPECT_FALSE(w2->done());
  EXPECT_FALSE(Describe("r").held);
  auto w1 = StartAcquire(Waiting("w1", "id1"));
  manager_->Sync();
  ASSERT_TRUE(w1->done());
  ASSERT_TRUE(w1->get()->acquired);
  ASSERT_THAT(Release("r", w1->get()->token), IsOk());
  ASSERT_TRUE(w2->done());
  ASSERT_THAT(Release("r", w2->get()->token), IsOk());
  ASSERT_TRUE(late->done());
  EXPECT_TRUE(late->get()->acquired);
}

TEST_P(LockManagerTest, AWaiterWhoseClientDoesNotComeBackIsDroppedAfterTheGrace) {
  limits_.waiter_reattach_grace = Seconds(5);
  Restart();
  uint64_t token = MustAcquire("r", "holder", Seconds(60));
  StartAcquire(Waiting("gone", "id-gone"));
  StartAcquire(Waiting("back", "id-back"));
  manager_->Sync();
  Restart();
  auto back = StartAcquire(Waiting("back", "id-back"));
  ASSERT_THAT(Release("r", token), IsOk());
  EXPECT_FALSE(back->done());  // "gone" still has the head of the queue
  Advance(Seconds(5) - Milliseconds(1));
  EXPECT_FALSE(back->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(back->done());
  EXPECT_TRUE(back->get()->acquired);
  EXPECT_EQ(Describe("r").waiters, 0u);
  Restart();  // and the dropped waiter's row is gone from the store too
  EXPECT_EQ(Describe("r").waiters, 0u);
}

TEST_P(LockManagerTest, ARetryOfAParkedCallTakesItsPlaceAndTheOldCallIsCancelled) {
  uint64_t token = MustAcquire("r", "holder");
  auto first = StartAcquire(Waiting("w", "same-id"));
  auto behind = StartAcquire(Waiting("other", "other-id"));
  auto retry = StartAcquire(Waiting("w", "same-id"));
  manager_->Sync();
  ASSERT_TRUE(first->done());
  EXPECT_THAT(first->get(), StatusIs(absl::StatusCode::kCancelled, HasSubstr("superseded")));
  EXPECT_EQ(Describe("r").waiters, 2u);
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(retry->done());
  EXPECT_TRUE(retry->get()->acquired);  // ahead of "other", as the first call was
  EXPECT_FALSE(behind->done());
}

TEST_P(LockManagerTest, OnlyWaitersWithARequestIdArePersistedAndEndedOnesAreDeleted) {
  uint64_t token = MustAcquire("r", "holder", Seconds(60));
  StartAcquire(Args("r", "anonymous", Seconds(10), Seconds(60)));  // no request id
  LockManager::CallId cancelled;
  StartAcquire(Waiting("cancelled", "id-c"), &cancelled);
  StartAcquire(Args("r", "timed-out", Seconds(10), Seconds(2), "id-t"));
  StartAcquire(Waiting("kept", "id-k"));
  manager_->Sync();
  manager_->CancelAcquire(cancelled);
  Advance(Seconds(2));  // "timed-out" gives up
  EXPECT_EQ(Describe("r").waiters, 2u);
  Restart();
  // The anonymous waiter was never persisted; the cancelled and timed-out
  // ones were deleted as they left the queue.
  EXPECT_EQ(Describe("r").waiters, 1u);
  auto kept = StartAcquire(Waiting("kept", "id-k"));
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(kept->done());
  EXPECT_TRUE(kept->get()->acquired);
  Restart();  // granted: its row went with the grant
  EXPECT_EQ(Describe("r").waiters, 0u);
  EXPECT_EQ(Describe("r").holder, "kept");
}

// Found by the random sequences (lock_sequence.h): granting a queued
// waiter moved its holder and request id out before removing it from the
// request-id index, so the index kept an entry for a waiter that no longer
// existed. These two tests fail without the fix.
TEST_P(LockManagerTest, AWaiterGrantedInAFailedCommitKeepsItsPlaceForItsRetry) {
  uint64_t token = MustAcquire("r", "holder", Seconds(30));
  auto first = StartAcquire(Waiting("w", "id-w"));
  manager_->Sync();
  faulty_->FailNthCommit(1);
  // The release hands the lock to "w" in a batch that fails: neither counts.
  EXPECT_THAT(Release("r", token), StatusIs(absl::StatusCode::kUnavailable));
  manager_->Sync();  // the recovery runs after the failed batch
  ASSERT_TRUE(first->done());
  EXPECT_THAT(first->get(), StatusIs(absl::StatusCode::kUnavailable));
  // Its row is still in the store: its place is kept for its retry.
  ASSERT_EQ(Describe("r").waiters, 1u);
  auto retry = StartAcquire(Waiting("w", "id-w"));
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(retry->done());
  EXPECT_TRUE(retry->get()->acquired);
}

TEST_P(LockManagerTest, ARetryOfAGrantedWaiterAfterItsLeaseEndedQueuesAfresh) {
  uint64_t token = MustAcquire("r", "holder", Seconds(30));
  auto w = StartAcquire(Waiting("w", "id-w"));
  auto x = StartAcquire(Waiting("x", "id-x"));
  ASSERT_THAT(Release("r", token), IsOk());
  ASSERT_TRUE(w->done());
  ASSERT_THAT(Release("r", w->get()->token), IsOk());  // "x" holds it now
  ASSERT_TRUE(x->done());
  // The same request id again, once that lease is over: a new wait.
  auto again = StartAcquire(Waiting("w", "id-w"));
  manager_->Sync();
  EXPECT_FALSE(again->done());
  ASSERT_EQ(Describe("r").waiters, 1u);
  ASSERT_THAT(Release("r", x->get()->token), IsOk());
  ASSERT_TRUE(again->done());
  EXPECT_TRUE(again->get()->acquired);
  EXPECT_GT(again->get()->token, x->get()->token);
}

// ------------------------------- parked calls of the holder (reentrancy)

// A holder with a parked call that gets the lock through another call (its
// client's earlier attempt, or a concurrent call under the same name): the
// parked call is granted at once as a reentrant acquire, in the same
// decision, not left queued behind its own lease until its wait runs out.
TEST_P(LockManagerTest, AParkedCallOfTheNewHolderIsGrantedReentrantlyAtOnce) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(30));
  auto first = StartAcquire(Args("r", "bob", Seconds(10), Seconds(60), "b1"));
  auto carol = StartAcquire(Waiting("carol", "c1"));
  auto second = StartAcquire(Args("r", "bob", Seconds(20), Seconds(60), "b2"));
  manager_->Sync();
  ASSERT_EQ(Describe("r").waiters, 3u);

  ASSERT_THAT(Release("r", alice), IsOk());
  ASSERT_TRUE(first->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult granted, first->get());
  EXPECT_TRUE(granted.acquired);
  EXPECT_EQ(granted.hold_count, 1u);
  ASSERT_TRUE(second->done()) << "bob's second call waits behind bob's own lease";
  ASSERT_OK_AND_ASSIGN(AcquireResult reentrant, second->get());
  EXPECT_TRUE(reentrant.acquired);
  EXPECT_EQ(reentrant.token, granted.token);
  EXPECT_EQ(reentrant.hold_count, 2u);
  EXPECT_EQ(reentrant.ttl, Seconds(20));  // as a reentrant acquire: never shorter
  ResourceInfo info = Describe("r");
  EXPECT_EQ(info.holder, "bob");
  EXPECT_EQ(info.hold_count, 2u);
  EXPECT_EQ(info.remaining, Seconds(20));
  EXPECT_EQ(info.waiters, 1u);  // carol, who keeps her place
  EXPECT_FALSE(carol->done());

  Restart();  // the promoted call's waiter row went with its grant
  EXPECT_EQ(Describe("r").waiters, 1u);
  EXPECT_EQ(Describe("r").hold_count, 2u);
  carol = StartAcquire(Waiting("carol", "c1"));
  ASSERT_THAT(Release("r", granted.token), IsOk());
  EXPECT_FALSE(carol->done());
  ASSERT_THAT(Release("r", granted.token), IsOk());
  ASSERT_TRUE(carol->done());
  EXPECT_GT(carol->get()->token, granted.token);
}

// The same after a failed commit: the recovery restores the holder's
// lease while one of its calls is parked (decided on the discarded state).
TEST_P(LockManagerTest, AParkedCallOfAHolderRestoredByARecoveryIsGranted) {
  uint64_t bob = MustAcquire("r", "bob", Seconds(30));
  absl::Notification at_store, proceed;
  faulty_->HoldNextCommit(&at_store, &proceed);
  faulty_->FailNthCommit(1);
  auto release = std::make_shared<Slot<ReleaseResult>>();
  manager_->Release(ReleaseArgs{"r", bob, "", ""},
                    [release](absl::StatusOr<ReleaseResult> r) { release->Set(std::move(r)); });
  at_store.WaitForNotification();
  // Decided on the release about to fail: carol takes r, bob queues again.
  auto carol = StartAcquire(Args("r", "carol"));
  auto again = StartAcquire(Waiting("bob", "b2"));
  proceed.Notify();
  manager_->Sync();  // the recovery runs after the failed batch,
  manager_->Sync();  // and its grants commit in the batch after
  EXPECT_THAT(release->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(carol->get(), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_TRUE(again->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult r, again->get());
  EXPECT_TRUE(r.acquired);
  EXPECT_EQ(r.token, bob);
  EXPECT_EQ(r.hold_count, 2u);
  EXPECT_EQ(Describe("r").waiters, 0u);
}

// A waiter loaded from the store whose client is not back yet is not
// granted (nobody would learn of the hold); its retry, once its holder
// holds the lock, is an ordinary reentrant acquire and its place goes.
TEST_P(LockManagerTest, ARetryOfTheHoldersLoadedWaiterIsReentrantAndLeavesTheQueue) {
  uint64_t alice = MustAcquire("r", "alice", Seconds(30));
  StartAcquire(Waiting("bob", "b1"));
  StartAcquire(Waiting("bob", "b2"));
  StartAcquire(Waiting("carol", "c1"));
  manager_->Sync();
  Restart();  // all three detached
  auto carol = StartAcquire(Waiting("carol", "c1"));
  ASSERT_THAT(Release("r", alice), IsOk());
  auto b1 = StartAcquire(Waiting("bob", "b1"));
  manager_->Sync();
  ASSERT_TRUE(b1->done());
  ASSERT_TRUE(b1->get()->acquired);
  EXPECT_EQ(Describe("r").hold_count, 1u);
  EXPECT_EQ(Describe("r").waiters, 2u);  // b2 (detached) and carol

  ASSERT_OK_AND_ASSIGN(AcquireResult b2, Acquire(Waiting("bob", "b2")));
  EXPECT_TRUE(b2.acquired);
  EXPECT_EQ(b2.token, b1->get()->token);
  EXPECT_EQ(b2.hold_count, 2u);
  EXPECT_EQ(Describe("r").waiters, 1u);
  // Once bob lets go, carol is next: no stale place of bob's holds her up.
  ASSERT_THAT(Release("r", b2.token), IsOk());
  ASSERT_THAT(Release("r", b2.token), IsOk());
  ASSERT_TRUE(carol->done());
  EXPECT_TRUE(carol->get()->acquired);
}

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
