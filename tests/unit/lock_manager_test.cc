// LockManager semantics on a FakeClock (lock_manager_fixture.h), on each
// store: grants and tokens, renew and release, reentrancy, FIFO queues,
// expiry, lock-delay, max_hold, limits. Restarts and failed commits are in
// lock_manager_restart_test.cc, bad input in lock_manager_input_test.cc.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/lock_manager_fixture.h"

namespace fencegate::lockservice {
namespace {

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

// The lease counts from its grant, which the call's client only learns from
// how long the call waited (its client counts its lease from sending it):
// a candidate that waited longer than its own TTL still gets a full lease.
TEST_P(LockManagerTest, AGrantSaysHowLongItsCallWaitedInLine) {
  ASSERT_OK_AND_ASSIGN(AcquireResult first,
                       Acquire(Args("r", "a", Seconds(2), Seconds(60))));
  EXPECT_TRUE(first.acquired);
  EXPECT_EQ(first.waited, absl::ZeroDuration());
  auto waiter = StartAcquire(Args("r", "b", Seconds(1), Seconds(60)));
  Advance(Seconds(2));  // a's lease expires: b, parked 2 s, is granted
  ASSERT_TRUE(waiter->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult granted, waiter->get());
  EXPECT_TRUE(granted.acquired);
  EXPECT_EQ(granted.waited, Seconds(2));
  EXPECT_EQ(granted.ttl, Seconds(1));
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

TEST_P(LockManagerTest, EveryParkedCallRunsOutAtItsOwnDeadlineAndLeavesNoTimer) {
  MustAcquire("r", "holder", Seconds(60));
  MustAcquire("s", "holder", Seconds(60));
  // Parked out of deadline order, on two resources: one clock timer serves
  // them all (deadline_index.h), re-armed for the next after each.
  auto late = StartAcquire(Args("r", "late", Seconds(10), Seconds(5)));
  auto early = StartAcquire(Args("s", "early", Seconds(10), Seconds(2)));
  LockManager::CallId gone;
  auto cancelled = StartAcquire(Args("r", "gone", Seconds(10), Seconds(1)), &gone);
  auto same = StartAcquire(Args("s", "same", Seconds(10), Seconds(2)));
  manager_->CancelAcquire(gone);          // its deadline must not fire anything
  EXPECT_EQ(clock_.PendingTimers(), 2u);  // the leases' and the waits'
  Advance(Seconds(2) - Milliseconds(1));
  EXPECT_FALSE(early->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(early->done() && same->done());
  EXPECT_FALSE(early->get()->acquired);
  EXPECT_FALSE(same->get()->acquired);
  EXPECT_FALSE(late->done());
  Advance(Seconds(3) - Milliseconds(1));
  EXPECT_FALSE(late->done());
  Advance(Milliseconds(1));
  ASSERT_TRUE(late->done());
  EXPECT_FALSE(late->get()->acquired);
  EXPECT_EQ(Describe("r").waiters, 0u);
  EXPECT_EQ(clock_.PendingTimers(), 1u);  // only the leases'
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


INSTANTIATE_TEST_SUITE_P(Stores, LockManagerTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
