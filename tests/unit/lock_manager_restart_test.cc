// LockManager across restarts and failed commits (lock_manager_fixture.h),
// on each store: leases re-armed for a full TTL, tokens that keep growing,
// failed commits that reveal nothing, wait queues that keep their places,
// and the parked calls of a holder.
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

class LockManagerRestartTest : public LockManagerTest {};

// ------------------------------------------------- durability and restarts

TEST_P(LockManagerRestartTest, RestartReArmsEveryLeaseForItsFullTtl) {
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

TEST_P(LockManagerRestartTest, TokensAfterRestartExceedEveryTokenBefore) {
  uint64_t max_before = 0;
  for (int i = 0; i < 10; ++i) {
    uint64_t t = MustAcquire("r" + std::to_string(i), "h");
    max_before = std::max(max_before, t);
    ASSERT_THAT(Release("r" + std::to_string(i), t), IsOk());  // rows deleted
  }
  Restart();
  EXPECT_GT(MustAcquire("fresh", "h"), max_before);
}

TEST_P(LockManagerRestartTest, RenewThatRaisesTheTtlIsDurable) {
  uint64_t token = MustAcquire("r", "alice", Seconds(2));
  ASSERT_THAT(Renew("r", token, Seconds(60)), IsOk());
  Restart();
  EXPECT_EQ(Describe("r").remaining, Seconds(60));
}

TEST_P(LockManagerRestartTest, FailedCommitRevealsNoTokenAndLaterTokensStillGrow) {
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

TEST_P(LockManagerRestartTest, FailedCommitFailsEveryReplyDecidedOnItsState) {
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

TEST_P(LockManagerRestartTest, RequestsDecidedWhileAFailingCommitIsInFlightAreNotCommitted) {
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

TEST_P(LockManagerRestartTest, StoreThatCannotReloadRefusesEverything) {
  MustAcquire("r", "holder");
  faulty_->FailNthCommit(1);
  faulty_->FailLoads(true);
  EXPECT_THAT(Acquire(Args("x", "y")), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(Acquire(Args("z", "y")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("restart")));
}


// ------------------------------------------ wait queues across restarts

// A parked Acquire with a request id, as the client library sends it.
AcquireArgs Waiting(std::string holder, std::string request_id) {
  return Args("r", std::move(holder), Seconds(10), Seconds(60), std::move(request_id));
}

TEST_P(LockManagerRestartTest, WaitersKeepTheirPlacesAcrossARestart) {
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

TEST_P(LockManagerRestartTest, AWaiterWhoseClientDoesNotComeBackIsDroppedAfterTheGrace) {
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

TEST_P(LockManagerRestartTest, ARetryOfAParkedCallTakesItsPlaceAndTheOldCallIsCancelled) {
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

TEST_P(LockManagerRestartTest, OnlyWaitersWithARequestIdArePersistedAndEndedOnesAreDeleted) {
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
TEST_P(LockManagerRestartTest, AWaiterGrantedInAFailedCommitKeepsItsPlaceForItsRetry) {
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

TEST_P(LockManagerRestartTest, ARetryOfAGrantedWaiterAfterItsLeaseEndedQueuesAfresh) {
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
TEST_P(LockManagerRestartTest, AParkedCallOfTheNewHolderIsGrantedReentrantlyAtOnce) {
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
TEST_P(LockManagerRestartTest, AParkedCallOfAHolderRestoredByARecoveryIsGranted) {
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
TEST_P(LockManagerRestartTest, ARetryOfTheHoldersLoadedWaiterIsReentrantAndLeavesTheQueue) {
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

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerRestartTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
