// LockManager's kinds of lease (docs/design.md, "The lock manager"), on each
// store (lock_manager_fixture.h): shared leases beside each other and never
// beside the exclusive one, FIFO across both kinds with no writer
// starvation, reentrancy and the downgrade, semaphores of N permits, a
// resource used in one way at a time, fences moved only by exclusive
// leases, and all of it across a restart.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/lock_manager_fixture.h"

namespace fencegate::lockservice {
namespace {

AcquireArgs Kind(std::string resource, std::string holder, LeaseMode mode,
                 uint32_t permits = 0, absl::Duration wait = absl::ZeroDuration(),
                 absl::Duration ttl = Seconds(10), std::string request_id = "") {
  AcquireArgs args = Args(std::move(resource), std::move(holder), ttl, wait,
                          std::move(request_id));
  args.mode = mode;
  args.permits = permits;
  return args;
}
AcquireArgs Shared(std::string resource, std::string holder,
                   absl::Duration wait = absl::ZeroDuration(),
                   absl::Duration ttl = Seconds(10)) {
  return Kind(std::move(resource), std::move(holder), LeaseMode::kShared, 0, wait, ttl);
}
AcquireArgs Exclusive(std::string resource, std::string holder,
                      absl::Duration wait = absl::ZeroDuration()) {
  return Kind(std::move(resource), std::move(holder), LeaseMode::kExclusive, 0, wait);
}
AcquireArgs Permit(std::string resource, std::string holder, uint32_t permits,
                   absl::Duration wait = absl::ZeroDuration()) {
  return Kind(std::move(resource), std::move(holder), LeaseMode::kPermit, permits, wait);
}

class LockManagerKindsTest : public LockManagerTest {
 protected:
  // Acquires and insists on a grant; returns the result.
  AcquireResult MustGet(AcquireArgs args) {
    absl::StatusOr<AcquireResult> r = Acquire(std::move(args));
    EXPECT_THAT(r, IsOk());
    if (!r.ok()) return AcquireResult{};
    EXPECT_TRUE(r->acquired);
    return *r;
  }
  bool Granted(const SlotPtr<AcquireResult>& slot) {
    manager_->Sync();
    return slot->done() && slot->get().ok() && slot->get()->acquired;
  }
};

TEST_P(LockManagerKindsTest, SharedLeasesAreHeldTogetherEachWithItsOwnToken) {
  AcquireResult a = MustGet(Shared("r", "alice"));
  AcquireResult b = MustGet(Shared("r", "bob"));
  EXPECT_EQ(a.mode, LeaseMode::kShared);
  EXPECT_GT(b.token, a.token);
  ResourceInfo info = Describe("r");
  EXPECT_EQ(info.mode, LeaseMode::kShared);
  EXPECT_EQ(info.holders, 2u);
  EXPECT_EQ(info.token, a.token);  // the oldest
  ASSERT_THAT(Renew("r", b.token, Seconds(20)), IsOk());
  ASSERT_THAT(Release("r", a.token), IsOk());
  EXPECT_EQ(Describe("r").holders, 1u);
  EXPECT_THAT(Release("r", a.token), StatusIs(absl::StatusCode::kAborted));
}

TEST_P(LockManagerKindsTest, TheExclusiveLeaseWaitsForEverySharedOne) {
  AcquireResult a = MustGet(Shared("r", "alice"));
  AcquireResult b = MustGet(Shared("r", "bob"));
  ASSERT_OK_AND_ASSIGN(AcquireResult refused, Acquire(Exclusive("r", "writer")));
  EXPECT_FALSE(refused.acquired);
  EXPECT_EQ(refused.holder_token, a.token);
  auto writer = StartAcquire(Exclusive("r", "writer", Seconds(30)));
  ASSERT_THAT(Release("r", a.token), IsOk());
  EXPECT_FALSE(Granted(writer));
  ASSERT_THAT(Release("r", b.token), IsOk());
  ASSERT_TRUE(Granted(writer));
  EXPECT_GT(writer->get()->token, b.token);
  EXPECT_EQ(writer->get()->mode, LeaseMode::kExclusive);
}

TEST_P(LockManagerKindsTest, SharedWaitsWhileTheExclusiveLeaseIsHeld) {
  uint64_t w = MustAcquire("r", "writer");
  ASSERT_OK_AND_ASSIGN(AcquireResult refused, Acquire(Shared("r", "reader")));
  EXPECT_FALSE(refused.acquired);
  EXPECT_EQ(refused.holder_token, w);
  auto reader = StartAcquire(Shared("r", "reader", Seconds(30)));
  EXPECT_FALSE(Granted(reader));
  ASSERT_THAT(Release("r", w), IsOk());
  ASSERT_TRUE(Granted(reader));
  EXPECT_GT(reader->get()->token, w);
}

// A queued writer holds back the readers behind it (no writer starvation).
TEST_P(LockManagerKindsTest, AQueuedExclusiveRequestHoldsBackLaterSharedOnes) {
  AcquireResult a = MustGet(Shared("r", "alice"));
  auto writer = StartAcquire(Exclusive("r", "writer", Seconds(30)));
  ASSERT_OK_AND_ASSIGN(AcquireResult late, Acquire(Shared("r", "bob")));
  EXPECT_FALSE(late.acquired);
  auto bob = StartAcquire(Shared("r", "bob", Seconds(30)));
  ASSERT_THAT(Release("r", a.token), IsOk());
  ASSERT_TRUE(Granted(writer));
  EXPECT_FALSE(Granted(bob));
  ASSERT_THAT(Release("r", writer->get()->token), IsOk());
  ASSERT_TRUE(Granted(bob));
}

// The queue is served from its head while its waiters fit: the run of
// readers up to the next writer, then nothing past it.
TEST_P(LockManagerKindsTest, ARunOfSharedWaitersIsGrantedUpToTheNextExclusiveOne) {
  uint64_t w = MustAcquire("r", "writer");
  auto r1 = StartAcquire(Shared("r", "r1", Seconds(30)));
  auto r2 = StartAcquire(Shared("r", "r2", Seconds(30)));
  auto w2 = StartAcquire(Exclusive("r", "w2", Seconds(30)));
  auto r3 = StartAcquire(Shared("r", "r3", Seconds(30)));
  ASSERT_THAT(Release("r", w), IsOk());
  EXPECT_TRUE(Granted(r1));
  EXPECT_TRUE(Granted(r2));
  EXPECT_FALSE(Granted(w2));
  EXPECT_FALSE(Granted(r3));
  EXPECT_EQ(Describe("r").holders, 2u);
  EXPECT_EQ(Describe("r").waiters, 2u);
  ASSERT_THAT(Release("r", r1->get()->token), IsOk());
  ASSERT_THAT(Release("r", r2->get()->token), IsOk());
  EXPECT_TRUE(Granted(w2));
  EXPECT_FALSE(Granted(r3));
}

// The readers behind a writer that gives up (its wait runs out, or its
// client cancels) are let in at once, not at the next release.
TEST_P(LockManagerKindsTest, AWriterThatGivesUpLetsTheReadersBehindItIn) {
  MustGet(Shared("r", "alice"));
  auto writer = StartAcquire(Exclusive("r", "writer", Seconds(1)));
  auto bob = StartAcquire(Shared("r", "bob", Seconds(30)));
  LockManager::CallId cancelled = 0;
  auto writer2 = StartAcquire(Exclusive("r", "writer2", Seconds(30)), &cancelled);
  auto carol = StartAcquire(Shared("r", "carol", Seconds(30)));
  EXPECT_FALSE(Granted(bob));
  Advance(Seconds(1));
  ASSERT_TRUE(writer->done());
  EXPECT_FALSE(writer->get()->acquired);
  EXPECT_TRUE(Granted(bob));
  EXPECT_FALSE(Granted(carol));
  manager_->CancelAcquire(cancelled);
  EXPECT_TRUE(Granted(carol));
  EXPECT_EQ(Describe("r").holders, 3u);
}

// Likewise when a holder's retry of its loaded (detached) waiter is
// answered on arrival as a reentrant acquire: the waiter leaves the head of
// the queue, and the readers it held back come in at once.
TEST_P(LockManagerKindsTest, AReentrantRetryOfALoadedWaiterLetsTheReadersBehindItIn) {
  const auto shared = [](std::string holder, std::string request_id) {
    return Kind("r", std::move(holder), LeaseMode::kShared, 0, Seconds(30), Seconds(10),
                std::move(request_id));
  };
  uint64_t w = MustAcquire("r", "writer");
  StartAcquire(shared("bob", "b0"));
  StartAcquire(shared("bob", "b1"));
  StartAcquire(shared("carol", "c1"));
  manager_->Sync();
  Restart();  // the three wait on in the store, behind the writer's lease
  auto b0 = StartAcquire(shared("bob", "b0"));
  auto c1 = StartAcquire(shared("carol", "c1"));
  ASSERT_THAT(Release("r", w), IsOk());
  ASSERT_TRUE(Granted(b0));
  EXPECT_FALSE(Granted(c1));  // behind bob's b1, whose client is not back yet
  AcquireResult b1 = MustGet(shared("bob", "b1"));  // reentrant, at once
  EXPECT_EQ(b1.token, b0->get()->token);
  EXPECT_EQ(b1.hold_count, 2u);
  EXPECT_TRUE(Granted(c1));
  EXPECT_EQ(Describe("r").waiters, 0u);
}

TEST_P(LockManagerKindsTest, ASharedHolderReentersAtOnceEvenWithAWriterQueued) {
  AcquireResult first = MustGet(Shared("r", "alice"));
  auto writer = StartAcquire(Exclusive("r", "writer", Seconds(30)));
  AcquireResult again = MustGet(Shared("r", "alice"));
  EXPECT_EQ(again.token, first.token);
  EXPECT_EQ(again.hold_count, 2u);
  ASSERT_THAT(Release("r", first.token), IsOk());
  EXPECT_FALSE(Granted(writer));
  ASSERT_THAT(Release("r", first.token), IsOk());
  EXPECT_TRUE(Granted(writer));
}

TEST_P(LockManagerKindsTest, TheExclusiveHolderDowngradesByTakingASharedLease) {
  uint64_t w = MustAcquire("r", "alice");
  AcquireResult shared = MustGet(Shared("r", "alice"));
  EXPECT_GT(shared.token, w);
  EXPECT_EQ(shared.mode, LeaseMode::kShared);
  ASSERT_OK_AND_ASSIGN(AcquireResult other, Acquire(Shared("r", "bob")));
  EXPECT_FALSE(other.acquired);  // the exclusive lease is still held
  ASSERT_THAT(Release("r", w), IsOk());
  EXPECT_TRUE(MustGet(Shared("r", "bob")).acquired);
  ASSERT_OK_AND_ASSIGN(AcquireResult writer, Acquire(Exclusive("r", "carol")));
  EXPECT_FALSE(writer.acquired);
}

TEST_P(LockManagerKindsTest, ASharedHolderAskingForTheExclusiveLeaseQueues) {
  AcquireResult shared = MustGet(Shared("r", "alice"));
  ASSERT_OK_AND_ASSIGN(AcquireResult upgrade, Acquire(Exclusive("r", "alice")));
  EXPECT_FALSE(upgrade.acquired);
  EXPECT_EQ(upgrade.holder_token, shared.token);
  // Released first, the upgrade is a plain acquire.
  ASSERT_THAT(Release("r", shared.token), IsOk());
  EXPECT_GT(MustGet(Exclusive("r", "alice")).token, shared.token);
}

TEST_P(LockManagerKindsTest, ASemaphoreGrantsNPermitsThenQueuesInOrder) {
  AcquireResult a = MustGet(Permit("s", "a", 2));
  AcquireResult b = MustGet(Permit("s", "b", 2));
  EXPECT_EQ(a.mode, LeaseMode::kPermit);
  EXPECT_GT(b.token, a.token);
  ASSERT_OK_AND_ASSIGN(AcquireResult full, Acquire(Permit("s", "c", 2)));
  EXPECT_FALSE(full.acquired);
  auto c = StartAcquire(Permit("s", "c", 2, Seconds(30)));
  auto d = StartAcquire(Permit("s", "d", 2, Seconds(30)));
  AcquireResult again = MustGet(Permit("s", "b", 2));  // one permit per holder
  EXPECT_EQ(again.token, b.token);
  EXPECT_EQ(again.hold_count, 2u);
  ResourceInfo info = Describe("s");
  EXPECT_EQ(info.mode, LeaseMode::kPermit);
  EXPECT_EQ(info.permits, 2u);
  EXPECT_EQ(info.holders, 2u);
  EXPECT_EQ(info.waiters, 2u);
  ASSERT_THAT(Release("s", a.token), IsOk());
  EXPECT_TRUE(Granted(c));
  EXPECT_FALSE(Granted(d));
  EXPECT_GT(c->get()->token, b.token);
}

TEST_P(LockManagerKindsTest, APermitComesBackWhenItExpires) {
  AcquireResult a = MustGet(Kind("s", "a", LeaseMode::kPermit, 1, absl::ZeroDuration(),
                                 Seconds(1)));
  auto b = StartAcquire(Permit("s", "b", 1, Seconds(30)));
  Advance(Seconds(1));
  ASSERT_TRUE(Granted(b));
  EXPECT_GT(b->get()->token, a.token);
  EXPECT_THAT(Renew("s", a.token, Seconds(10)), StatusIs(absl::StatusCode::kAborted));
}

TEST_P(LockManagerKindsTest, EachSharedLeaseExpiresOnItsOwn) {
  AcquireResult a = MustGet(Shared("r", "alice", absl::ZeroDuration(), Seconds(1)));
  AcquireResult b = MustGet(Shared("r", "bob", absl::ZeroDuration(), Seconds(5)));
  auto writer = StartAcquire(Exclusive("r", "writer", Seconds(30)));
  Advance(Seconds(2));
  EXPECT_FALSE(Granted(writer));
  EXPECT_THAT(Renew("r", a.token, Seconds(10)), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(Renew("r", b.token, Seconds(1)), IsOk());
  Advance(Seconds(1));
  ASSERT_TRUE(Granted(writer));
  EXPECT_GT(writer->get()->token, b.token);
}

TEST_P(LockManagerKindsTest, AResourceIsUsedInOneWayAtATime) {
  AcquireResult permit = MustGet(Permit("s", "a", 2));
  absl::StatusOr<AcquireResult> exclusive = Acquire(Exclusive("s", "b"));
  EXPECT_THAT(exclusive, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode")));
  ASSERT_TRUE(GetErrorInfo(exclusive.status()).has_value());
  EXPECT_EQ(GetErrorInfo(exclusive.status())->field, "mode");
  EXPECT_THAT(Acquire(Shared("s", "b")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("semaphore of 2")));
  EXPECT_THAT(Acquire(Permit("s", "b", 3)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
  uint64_t w = MustAcquire("r", "writer");
  EXPECT_THAT(Acquire(Permit("r", "b", 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("read-write")));
  // Once nothing refers to it, a resource is decided again.
  ASSERT_THAT(Release("s", permit.token), IsOk());
  ASSERT_THAT(Release("r", w), IsOk());
  EXPECT_TRUE(MustGet(Permit("r", "b", 3)).acquired);
  EXPECT_TRUE(MustGet(Exclusive("s", "b")).acquired);
}

TEST_P(LockManagerKindsTest, ASemaphoreKeepsItsSizeWhileSomebodyWaits) {
  AcquireResult a = MustGet(Permit("s", "a", 1));
  auto b = StartAcquire(Permit("s", "b", 1, Seconds(30)));
  ASSERT_THAT(Release("s", a.token), IsOk());
  ASSERT_TRUE(Granted(b));
  EXPECT_THAT(Acquire(Permit("s", "c", 5)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
}

// A permit past its expiry whose timer has not run yet (a busy timer
// thread) is ended by the next call on its resource; with nothing else
// referring to it, the resource is forgotten, and that call decides its
// kind again.
TEST_P(LockManagerKindsTest, AnExpiredPermitEndedByTheNextCallLeavesNoSemaphoreBehind) {
  SlotPtr<AcquireResult> later;
  // Set before the permit's expiry timer, so at that instant it runs first.
  clock_.RunAt(clock_.Now() + Seconds(1),
               [&] { later = StartAcquire(Exclusive("s", "b")); });
  MustGet(Kind("s", "a", LeaseMode::kPermit, 2, absl::ZeroDuration(), Seconds(1)));
  Advance(Seconds(1));
  ASSERT_NE(later, nullptr);
  ASSERT_TRUE(later->done());
  ASSERT_THAT(later->get(), IsOk());
  EXPECT_TRUE(later->get()->acquired);
}

TEST_P(LockManagerKindsTest, PermitsOutsideTheirRangeAreRefusedNamingTheField) {
  limits_.max_holders_per_resource = 4;
  Restart();
  absl::StatusOr<AcquireResult> zero = Acquire(Permit("s", "a", 0));
  EXPECT_THAT(zero, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
  std::optional<ErrorInfo> info = GetErrorInfo(zero.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->field, "permits");
  EXPECT_THAT(Acquire(Permit("s", "a", 5)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--max_holders_per_resource")));
  EXPECT_THAT(Acquire(Kind("s", "a", LeaseMode::kShared, 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
  EXPECT_TRUE(MustGet(Permit("s", "a", 4)).acquired);
}

TEST_P(LockManagerKindsTest, SharedLeasesStopAtTheHolderLimit) {
  limits_.max_holders_per_resource = 2;
  Restart();
  MustGet(Shared("r", "a"));
  AcquireResult b = MustGet(Shared("r", "b"));
  ASSERT_OK_AND_ASSIGN(AcquireResult c, Acquire(Shared("r", "c")));
  EXPECT_FALSE(c.acquired);
  auto waiting = StartAcquire(Shared("r", "c", Seconds(30)));
  ASSERT_THAT(Release("r", b.token), IsOk());
  EXPECT_TRUE(Granted(waiting));
}

// Only an exclusive lease writes: shared leases and permits move no fence,
// so a reader's grant or expiry never fences out the other readers.
TEST_P(LockManagerKindsTest, OnlyExclusiveLeasesMoveTheFence) {
  AcquireResult a = MustGet(Shared("r", "alice", absl::ZeroDuration(), Seconds(1)));
  MustGet(Permit("s", "p", 2));
  Advance(Seconds(2));  // alice's shared lease expires
  ASSERT_OK_AND_ASSIGN(std::vector<FencePosition> none, store_->ScanFencePositions(0, 10));
  EXPECT_TRUE(none.empty());
  uint64_t w = MustAcquire("r", "writer");
  ASSERT_OK_AND_ASSIGN(std::vector<FencePosition> one, store_->ScanFencePositions(0, 10));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].resource, "r");
  EXPECT_EQ(one[0].position, w);
  EXPECT_GT(w, a.token);
}

TEST_P(LockManagerKindsTest, SharedLeasesPermitsAndTheirWaitersSurviveARestart) {
  AcquireResult a = MustGet(Shared("r", "alice"));
  AcquireResult b = MustGet(Shared("r", "bob"));
  AcquireResult p = MustGet(Permit("s", "p", 1));
  auto q = StartAcquire(
      Kind("s", "q", LeaseMode::kPermit, 1, Seconds(30), Seconds(10), "q-1"));
  ASSERT_FALSE(Granted(q));
  Restart();
  ResourceInfo r = Describe("r");
  EXPECT_EQ(r.mode, LeaseMode::kShared);
  EXPECT_EQ(r.holders, 2u);
  ResourceInfo s = Describe("s");
  EXPECT_EQ(s.mode, LeaseMode::kPermit);
  EXPECT_EQ(s.permits, 1u);
  EXPECT_EQ(s.waiters, 1u);
  // Still held, by the same tokens: a writer waits, and renewals work.
  ASSERT_OK_AND_ASSIGN(AcquireResult writer, Acquire(Exclusive("r", "writer")));
  EXPECT_FALSE(writer.acquired);
  EXPECT_THAT(Renew("r", a.token, Seconds(10)), IsOk());
  EXPECT_THAT(Renew("s", p.token, Seconds(10)), IsOk());
  EXPECT_THAT(Acquire(Permit("s", "x", 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
  // q's retry takes its place back and gets the permit once p lets go.
  auto retry = StartAcquire(
      Kind("s", "q", LeaseMode::kPermit, 1, Seconds(30), Seconds(10), "q-1"));
  ASSERT_THAT(Release("s", p.token), IsOk());
  ASSERT_TRUE(Granted(retry));
  EXPECT_GT(retry->get()->token, b.token);
  EXPECT_EQ(retry->get()->mode, LeaseMode::kPermit);
}

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerKindsTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
