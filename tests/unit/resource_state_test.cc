// ResourceState (lockservice/core/resource_state.h): what one resource holds
// and what it answers without a store, clock or listener. Plain values in,
// plain values out: no LockManager.
#include "lockservice/core/resource_state.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lockservice/core/grant_rule.h"

namespace fencegate::lockservice {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

HeldLease Lease(const std::string& holder, uint64_t token, LeaseMode mode,
                absl::Duration left = absl::Seconds(10)) {
  HeldLease lease;
  lease.holder = holder;
  lease.token = token;
  lease.mode = mode;
  lease.hold_count = 1;
  lease.expiry = CompactTime(kNow + left);
  return lease;
}

Waiter Waiting(const std::string& holder, LeaseMode mode = LeaseMode::kExclusive) {
  Waiter w;
  w.holder = holder;
  w.mode = mode;
  return w;
}

// A semaphore of `permits` with the given holders' permits held.
ResourceState Semaphore(uint32_t permits, std::initializer_list<const char*> holders) {
  ResourceState r;
  r.EnsureShared().permits = permits;
  uint64_t token = 10;
  for (const char* holder : holders) {
    r.shared->leases.push_back(Lease(holder, token++, LeaseMode::kPermit));
  }
  return r;
}

AcquireArgs Asking(LeaseMode mode, uint32_t permits = 0) {
  AcquireArgs args;
  args.resource = "r";
  args.holder = "asker";
  args.mode = mode;
  args.permits = permits;
  return args;
}

bool Allowed(const ResourceState& r, const std::string& holder, LeaseMode mode,
             absl::Time now = kNow) {
  return GrantAllowed(mode, r.FactsFor(holder, now, /*max_holders=*/3));
}

TEST(ResourceStateTest, FindsALeaseOfAnyKindByItsToken) {
  ResourceState r;
  EXPECT_EQ(r.FindLease(7), nullptr);
  r.lease = Lease("writer", 7, LeaseMode::kExclusive);
  r.EnsureShared().leases.push_back(Lease("reader", 9, LeaseMode::kShared));
  ASSERT_NE(r.FindLease(7), nullptr);
  EXPECT_EQ(r.FindLease(7)->holder, "writer");
  ASSERT_NE(r.FindLease(9), nullptr);
  EXPECT_EQ(r.FindLease(9)->holder, "reader");
  EXPECT_EQ(r.FindLease(8), nullptr);
}

TEST(ResourceStateTest, ReentersOnlyTheHoldersOwnLeaseOfTheSameKind) {
  ResourceState r;
  r.lease = Lease("writer", 7, LeaseMode::kExclusive);
  r.EnsureShared().leases.push_back(Lease("reader", 9, LeaseMode::kShared));
  EXPECT_EQ(r.ReentrantLease("writer", LeaseMode::kExclusive), &*r.lease);
  EXPECT_EQ(r.ReentrantLease("writer", LeaseMode::kShared), nullptr);
  EXPECT_EQ(r.ReentrantLease("reader", LeaseMode::kShared), &r.shared->leases[0]);
  EXPECT_EQ(r.ReentrantLease("reader", LeaseMode::kExclusive), nullptr);
  EXPECT_EQ(r.ReentrantLease("someone", LeaseMode::kShared), nullptr);
}

TEST(ResourceStateTest, TheOldestIsTheExclusiveLeaseElseTheLowestSharedToken) {
  ResourceState r;
  EXPECT_EQ(r.Oldest(), nullptr);
  r.EnsureShared().leases.push_back(Lease("b", 12, LeaseMode::kShared));
  r.shared->leases.push_back(Lease("a", 11, LeaseMode::kShared));
  EXPECT_EQ(r.Oldest()->token, 11u);
  r.lease = Lease("writer", 20, LeaseMode::kExclusive);
  EXPECT_EQ(r.Oldest()->token, 20u);
}

TEST(ResourceStateTest, ASemaphoreIsOneWhilePermitsAreHeldOrWaitedFor) {
  ResourceState r = Semaphore(2, {"a"});
  EXPECT_TRUE(r.IsSemaphore());
  r.shared->leases.clear();  // its last permit ended
  EXPECT_FALSE(r.IsSemaphore());
  r.EnsureQueue().Link(r.queue->end(), Waiting("b", LeaseMode::kPermit));
  EXPECT_TRUE(r.IsSemaphore());
  EXPECT_FALSE(ResourceState().IsSemaphore());
}

TEST(ResourceStateTest, ASemaphoreRefusesAnotherSizeAndOtherKinds) {
  const ResourceState r = Semaphore(3, {"a"});
  EXPECT_TRUE(r.CheckKind(Asking(LeaseMode::kPermit, 3), kNow).ok());
  const absl::Status size = r.CheckKind(Asking(LeaseMode::kPermit, 2), kNow);
  EXPECT_EQ(size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(size.message(), "permits:")) << size;
  EXPECT_TRUE(absl::StrContains(size.message(), "semaphore of 3 permits")) << size;
  for (LeaseMode mode : {LeaseMode::kExclusive, LeaseMode::kShared}) {
    const absl::Status kind = r.CheckKind(Asking(mode), kNow);
    EXPECT_EQ(kind.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(kind.message(), "mode:")) << kind;
  }
}

TEST(ResourceStateTest, AReadWriteLockInUseRefusesPermitsEvenWhileOnlyDelayed) {
  ResourceState r;
  EXPECT_TRUE(r.CheckKind(Asking(LeaseMode::kPermit, 2), kNow).ok());  // free
  r.delay_until = CompactTime(kNow + absl::Seconds(1));
  const absl::Status delayed = r.CheckKind(Asking(LeaseMode::kPermit, 2), kNow);
  EXPECT_EQ(delayed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(delayed.message(), "mode:")) << delayed;
  // Once the delay has run out, it is free again.
  EXPECT_TRUE(r.CheckKind(Asking(LeaseMode::kPermit, 2), kNow + absl::Seconds(1)).ok());
  r.lease = Lease("writer", 7, LeaseMode::kExclusive);
  EXPECT_FALSE(r.CheckKind(Asking(LeaseMode::kPermit, 2), kNow + absl::Seconds(5)).ok());
  EXPECT_TRUE(r.CheckKind(Asking(LeaseMode::kShared), kNow).ok());
}

TEST(ResourceStateTest, ItsFactsLetTheGrantRuleDecide) {
  ResourceState r;
  EXPECT_TRUE(Allowed(r, "a", LeaseMode::kExclusive));
  r.lease = Lease("writer", 7, LeaseMode::kExclusive);
  EXPECT_FALSE(Allowed(r, "a", LeaseMode::kExclusive));
  EXPECT_FALSE(Allowed(r, "a", LeaseMode::kShared));      // beside a writer
  EXPECT_TRUE(Allowed(r, "writer", LeaseMode::kShared));  // a downgrade
  r.lease.reset();
  r.delay_until = CompactTime(kNow + absl::Seconds(1));
  EXPECT_FALSE(Allowed(r, "a", LeaseMode::kExclusive));
  EXPECT_FALSE(Allowed(r, "a", LeaseMode::kShared));
  EXPECT_TRUE(Allowed(r, "a", LeaseMode::kExclusive, kNow + absl::Seconds(1)));
  // Shared leases up to max_holders (3 above).
  r = ResourceState();
  for (uint64_t token = 1; token <= 3; ++token) {
    EXPECT_TRUE(Allowed(r, "a", LeaseMode::kShared)) << token;
    r.EnsureShared().leases.push_back(Lease("r", token, LeaseMode::kShared));
  }
  EXPECT_FALSE(Allowed(r, "a", LeaseMode::kShared));
  // Permits up to the semaphore's size, whatever max_holders says.
  EXPECT_TRUE(Allowed(Semaphore(2, {"a"}), "b", LeaseMode::kPermit));
  EXPECT_FALSE(Allowed(Semaphore(2, {"a", "b"}), "c", LeaseMode::kPermit));
}

TEST(ResourceStateTest, DescribesItsOldestLeaseItsKindAndItsQueue) {
  ResourceState r = Semaphore(4, {"a", "b"});
  r.EnsureQueue().Link(r.queue->end(), Waiting("c", LeaseMode::kPermit));
  const ResourceInfo info = r.Info(kNow + absl::Seconds(4));
  EXPECT_TRUE(info.held);
  EXPECT_EQ(info.mode, LeaseMode::kPermit);
  EXPECT_EQ(info.permits, 4u);
  EXPECT_EQ(info.holders, 2u);
  EXPECT_EQ(info.waiters, 1u);
  EXPECT_EQ(info.holder, "a");
  EXPECT_EQ(info.token, 10u);
  EXPECT_EQ(info.remaining, absl::Seconds(6));
  // A lease past its expiry that no timer ended yet shows no time left.
  EXPECT_EQ(r.Info(kNow + absl::Minutes(1)).remaining, absl::ZeroDuration());

  ResourceState delayed;
  delayed.delay_until = CompactTime(kNow + absl::Seconds(2));
  const ResourceInfo free = delayed.Info(kNow);
  EXPECT_FALSE(free.held);
  EXPECT_EQ(free.mode, LeaseMode::kExclusive);
  EXPECT_EQ(free.lock_delay_remaining, absl::Seconds(2));
}

TEST(ResourceStateTest, SaysWhyAnAcquireWasNotGrantedAndWhenToRetry) {
  ResourceState r;
  r.lease = Lease("writer", 7, LeaseMode::kExclusive, absl::Seconds(3));
  AcquireResult held = r.NotAcquired(kNow);
  EXPECT_EQ(held.reason, NotAcquiredReason::kHeld);
  EXPECT_EQ(held.holder_token, 7u);
  EXPECT_EQ(held.retry_after, absl::Seconds(3));

  r.lease.reset();
  r.delay_until = CompactTime(kNow + absl::Seconds(2));
  AcquireResult delayed = r.NotAcquired(kNow);
  EXPECT_EQ(delayed.reason, NotAcquiredReason::kLockDelay);
  EXPECT_EQ(delayed.holder_token, 0u);
  EXPECT_EQ(delayed.retry_after, absl::Seconds(2));
}

TEST(ResourceStateTest, TrimDropsUnusedPartsAndASemaphoreKeepsItsSizeForItsWaiters) {
  ResourceState r = Semaphore(2, {});
  r.EnsureQueue().Link(r.queue->end(), Waiting("a", LeaseMode::kPermit));
  r.Trim();
  ASSERT_NE(r.shared, nullptr);  // its waiter still asks for 2 permits
  EXPECT_EQ(r.shared->permits, 2u);
  EXPECT_FALSE(r.Empty(kNow));

  r.queue->Unlink(r.queue->begin());
  r.Trim();
  EXPECT_EQ(r.queue, nullptr);
  EXPECT_EQ(r.shared, nullptr);
  EXPECT_TRUE(r.Empty(kNow));

  // Shared holds of a read-write lock go with their last lease.
  r.EnsureShared();
  r.Trim();
  EXPECT_EQ(r.shared, nullptr);

  // A lock-delay keeps a free resource until it runs out.
  r.delay_until = CompactTime(kNow + absl::Seconds(1));
  EXPECT_FALSE(r.Empty(kNow));
  EXPECT_TRUE(r.Empty(kNow + absl::Seconds(1)));
  r.lease = Lease("writer", 7, LeaseMode::kExclusive);
  EXPECT_FALSE(r.Empty(kNow + absl::Seconds(1)));
}

}  // namespace
}  // namespace fencegate::lockservice
