// LockManager::AcquireMany (lock_manager.h), on each store
// (lock_manager_fixture.h): several resources granted all together or not at
// all, parked in every queue at once, no deadlock between calls that name
// overlapping sets in other orders, timeouts and cancels that free the
// queues they held, retries that are applied once, and a failed commit that
// keeps none of the set.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/lock_manager_fixture.h"

namespace fencegate::lockservice {
namespace {

MultiAcquireArgs Many(std::vector<std::string> resources, std::string holder,
                      absl::Duration wait = absl::ZeroDuration(),
                      std::string request_id = "",
                      LeaseMode mode = LeaseMode::kExclusive) {
  MultiAcquireArgs args;
  args.resources = std::move(resources);
  args.holder = std::move(holder);
  args.ttl = Seconds(10);
  args.wait = wait;
  args.request_id = std::move(request_id);
  args.mode = mode;
  return args;
}

class LockManagerMultiTest : public LockManagerTest {
 protected:
  SlotPtr<MultiAcquireResult> StartMany(MultiAcquireArgs args,
                                        LockManager::CallId* id = nullptr) {
    auto slot = std::make_shared<Slot<MultiAcquireResult>>();
    LockManager::CallId call = manager_->NewCallId();
    if (id != nullptr) *id = call;
    manager_->AcquireMany(call, std::move(args), [slot](absl::StatusOr<MultiAcquireResult> r) {
      slot->Set(std::move(r));
    });
    return slot;
  }
  absl::StatusOr<MultiAcquireResult> AcquireMany(MultiAcquireArgs args) {
    auto slot = StartMany(std::move(args));
    manager_->Sync();
    return slot->get();
  }
  template <typename T>
  bool Granted(const SlotPtr<T>& slot) {
    manager_->Sync();
    return slot->done() && slot->get().ok() && slot->get()->acquired;
  }
  // Releases every lease of a granted AcquireMany.
  void ReleaseAll(const std::vector<std::string>& resources,
                  const MultiAcquireResult& granted) {
    for (size_t i = 0; i < resources.size(); ++i) {
      ASSERT_THAT(Release(resources[i], granted.leases[i].token), IsOk());
    }
  }
};

TEST_P(LockManagerMultiTest, FreeResourcesAreGrantedTogetherEachWithItsOwnToken) {
  uint64_t before = MustAcquire("other", "x");
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult got, AcquireMany(Many({"c", "a", "b"}, "alice")));
  ASSERT_TRUE(got.acquired);
  ASSERT_EQ(got.leases.size(), 3u);
  EXPECT_GT(got.leases[0].token, before);
  EXPECT_GT(got.leases[1].token, got.leases[0].token);
  EXPECT_GT(got.leases[2].token, got.leases[1].token);
  EXPECT_EQ(Describe("c").token, got.leases[0].token);
  EXPECT_EQ(Describe("a").token, got.leases[1].token);
  EXPECT_EQ(Describe("b").holder, "alice");
  // Each is a lease of its own: renewed and released on its own.
  ASSERT_THAT(Release("a", got.leases[1].token), IsOk());
  EXPECT_FALSE(Describe("a").held);
  EXPECT_TRUE(Describe("b").held);
}

TEST_P(LockManagerMultiTest, OneBusyResourceMeansNoneIsGranted) {
  uint64_t b = MustAcquire("b", "bob");
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult got, AcquireMany(Many({"a", "b", "c"}, "alice")));
  EXPECT_FALSE(got.acquired);
  EXPECT_TRUE(got.leases.empty());
  EXPECT_EQ(got.busy_resource, "b");
  EXPECT_EQ(got.busy.holder_token, b);
  EXPECT_FALSE(Describe("a").held);
  EXPECT_FALSE(Describe("c").held);
}

TEST_P(LockManagerMultiTest, AParkedCallIsGrantedWhenItsLastResourceFrees) {
  uint64_t a = MustAcquire("a", "x");
  uint64_t b = MustAcquire("b", "y");
  auto many = StartMany(Many({"a", "b"}, "alice", Seconds(30)));
  ASSERT_THAT(Release("a", a), IsOk());
  EXPECT_FALSE(Granted(many));
  Advance(Seconds(3));
  // It stands first in a's queue: a stays free for it, not for later comers.
  ASSERT_OK_AND_ASSIGN(AcquireResult later, Acquire(Args("a", "z")));
  EXPECT_FALSE(later.acquired);
  EXPECT_FALSE(Describe("a").held);
  ASSERT_THAT(Release("b", b), IsOk());
  ASSERT_TRUE(Granted(many));
  EXPECT_EQ(Describe("a").holder, "alice");
  EXPECT_EQ(Describe("b").holder, "alice");
  // Its leases count from the grant, 3 s after the call arrived.
  EXPECT_EQ(many->get()->waited, Seconds(3));
}

// The deadlock of two callers taking two locks in opposite orders cannot
// happen: each stands in both queues in the order it arrived.
TEST_P(LockManagerMultiTest, OverlappingSetsInOppositeOrdersDoNotDeadlock) {
  uint64_t a = MustAcquire("a", "x");
  uint64_t b = MustAcquire("b", "y");
  auto p = StartMany(Many({"a", "b"}, "p", Seconds(30)));
  auto q = StartMany(Many({"b", "a"}, "q", Seconds(30)));
  ASSERT_THAT(Release("b", b), IsOk());
  ASSERT_THAT(Release("a", a), IsOk());
  ASSERT_TRUE(Granted(p));
  EXPECT_FALSE(Granted(q));
  ReleaseAll({"a", "b"}, *p->get());
  ASSERT_TRUE(Granted(q));
  EXPECT_EQ(Describe("a").holder, "q");
}

TEST_P(LockManagerMultiTest, AWaitThatRunsOutNamesTheBusyResourceAndFreesTheQueues) {
  uint64_t b = MustAcquire("b", "bob");
  auto many = StartMany(Many({"a", "b"}, "alice", Seconds(1)));
  auto behind = StartAcquire(Args("a", "carol", Seconds(10), Seconds(30)));
  EXPECT_FALSE(Granted(behind));
  Advance(Seconds(1));
  ASSERT_TRUE(many->done());
  ASSERT_THAT(many->get(), IsOk());
  EXPECT_FALSE(many->get()->acquired);
  EXPECT_EQ(many->get()->busy_resource, "b");
  EXPECT_EQ(many->get()->busy.holder_token, b);
  EXPECT_TRUE(Granted(behind));  // a's queue went on
}

TEST_P(LockManagerMultiTest, ACancelledCallFreesTheQueuesItHeld) {
  MustAcquire("b", "bob");
  LockManager::CallId id = 0;
  auto many = StartMany(Many({"a", "b"}, "alice", Seconds(30)), &id);
  auto behind = StartAcquire(Args("a", "carol", Seconds(10), Seconds(30)));
  manager_->CancelAcquire(id);
  manager_->Sync();
  ASSERT_TRUE(many->done());
  EXPECT_THAT(many->get(), StatusIs(absl::StatusCode::kCancelled));
  EXPECT_TRUE(Granted(behind));
  EXPECT_EQ(Describe("b").waiters, 0u);
}

TEST_P(LockManagerMultiTest, ARetryWithTheSameRequestIdIsAppliedOnce) {
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult first,
                       AcquireMany(Many({"a", "b"}, "alice", absl::ZeroDuration(), "m-1")));
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult retry,
                       AcquireMany(Many({"a", "b"}, "alice", absl::ZeroDuration(), "m-1")));
  ASSERT_TRUE(retry.acquired);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(retry.leases[i].token, first.leases[i].token);
    EXPECT_EQ(retry.leases[i].hold_count, 1u);
  }
}

TEST_P(LockManagerMultiTest, SharedLeasesOnSeveralResourcesGoBesideOtherReaders) {
  MultiAcquireArgs reader = Many({"a", "b"}, "r1", absl::ZeroDuration(), "",
                                 LeaseMode::kShared);
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult one, AcquireMany(reader));
  reader.holder = "r2";
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult two, AcquireMany(reader));
  ASSERT_TRUE(one.acquired);
  ASSERT_TRUE(two.acquired);
  EXPECT_EQ(two.leases[0].mode, LeaseMode::kShared);
  EXPECT_EQ(Describe("a").holders, 2u);
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult writer, AcquireMany(Many({"b", "c"}, "w")));
  EXPECT_FALSE(writer.acquired);
  EXPECT_EQ(writer.busy_resource, "b");
}

TEST_P(LockManagerMultiTest, AFailedCommitKeepsNoneOfTheSet) {
  faulty_->FailNthCommit(1);
  EXPECT_THAT(AcquireMany(Many({"a", "b", "c"}, "alice")),
              StatusIs(absl::StatusCode::kUnavailable));
  for (const char* name : {"a", "b", "c"}) EXPECT_FALSE(Describe(name).held) << name;
  Restart();
  for (const char* name : {"a", "b", "c"}) EXPECT_FALSE(Describe(name).held) << name;
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult got, AcquireMany(Many({"a", "b", "c"}, "bob")));
  EXPECT_TRUE(got.acquired);
  Restart();
  EXPECT_EQ(Describe("c").token, got.leases[2].token);
}

TEST_P(LockManagerMultiTest, BadListsAreRefusedNamingTheField) {
  EXPECT_THAT(AcquireMany(Many({}, "alice")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resources")));
  std::vector<std::string> nine;
  for (int i = 0; i < 9; ++i) nine.push_back("r" + std::to_string(i));
  EXPECT_THAT(AcquireMany(Many(nine, "alice")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--max_multi_resources")));
  EXPECT_THAT(AcquireMany(Many({"a", "b", "a"}, "alice")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("named twice")));
  EXPECT_THAT(AcquireMany(Many({"a", ""}, "alice")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resources")));
  EXPECT_THAT(AcquireMany(Many({"a"}, "alice", absl::ZeroDuration(), "",
                               LeaseMode::kPermit)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode")));
  EXPECT_FALSE(Describe("a").held);
}

TEST_P(LockManagerMultiTest, TheFlagLowersTheLongestList) {
  limits_.max_multi_resources = 2;
  Restart();
  EXPECT_THAT(AcquireMany(Many({"a", "b", "c"}, "alice")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("1 to 2 resources (--max_multi_resources), not 3")));
  ASSERT_OK_AND_ASSIGN(MultiAcquireResult two, AcquireMany(Many({"a", "b"}, "alice")));
  EXPECT_TRUE(two.acquired);
}

TEST_P(LockManagerMultiTest, ShutdownEndsParkedCallsAndLeavesNothingQueued) {
  MustAcquire("b", "bob");
  auto many = StartMany(Many({"a", "b"}, "alice", Seconds(30)));
  manager_->Sync();
  manager_->Shutdown();
  ASSERT_TRUE(many->done());
  EXPECT_THAT(many->get(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(manager_->Figures().waiters, 0u);
}

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerMultiTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
