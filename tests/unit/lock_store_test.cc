// The LockStore contract (lock_store.h), on each store (StoreUnderTest):
// what was committed is what a restarted store loads; the counter and the
// fence positions never go down; an empty batch changes nothing; waiters
// come back in arrival order.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockservice/sqlite_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::Field;

LeaseRecord Lease(std::string resource, uint64_t token) {
  LeaseRecord r;
  r.resource = resource;
  r.holder = "holder-" + resource;
  r.token = token;
  r.ttl = absl::Seconds(7);
  r.hold_count = 2;
  r.request_ids = {"a", "b"};
  return r;
}

MATCHER_P2(PositionIs, resource, position, "") {
  return arg.resource == resource && arg.position == static_cast<uint64_t>(position);
}

class LockStoreTest : public ::testing::TestWithParam<testing::StoreKind> {
 protected:
  void SetUp() override {
    stores_ = testing::StoreUnderTest::Make(GetParam(), dir_.path());
    Reopen();
  }

  // A restart: the store is dropped and opened again on the same state, and
  // loaded, as LockManager does before its first commit.
  void Reopen() {
    store_.reset();
    auto store = stores_->Open();
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    ASSERT_THAT(store_->Load(), IsOk());
  }

  LockStoreState Load() {
    absl::StatusOr<LockStoreState> state = store_->Load();
    EXPECT_THAT(state, IsOk());
    return state.ok() ? *state : LockStoreState();
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::StoreUnderTest> stores_;
  std::unique_ptr<LockStore> store_;
};

TEST_P(LockStoreTest, CommitThenReopenReturnsWhatWasCommitted) {
  LockStoreBatch batch;
  batch.last_token = 5;
  batch.leases.emplace_back("x", Lease("x", 4));
  batch.leases.emplace_back("y", Lease("y", 5));
  ASSERT_THAT(store_->Commit(batch), IsOk());
  LockStoreBatch del;
  del.leases.emplace_back("x", std::nullopt);
  ASSERT_THAT(store_->Commit(del), IsOk());
  Reopen();
  LockStoreState state = Load();
  EXPECT_EQ(state.last_token, 5u);
  ASSERT_EQ(state.leases.size(), 1u);
  const LeaseRecord& y = state.leases[0];
  EXPECT_EQ(y.resource, "y");
  EXPECT_EQ(y.holder, "holder-y");
  EXPECT_EQ(y.token, 5u);
  EXPECT_EQ(y.ttl, absl::Seconds(7));
  EXPECT_EQ(y.hold_count, 2u);
  EXPECT_THAT(y.request_ids, ElementsAre("a", "b"));
}

TEST_P(LockStoreTest, CounterNeverGoesDown) {
  LockStoreBatch high;
  high.last_token = 100;
  ASSERT_THAT(store_->Commit(high), IsOk());
  LockStoreBatch low;
  low.last_token = 7;
  ASSERT_THAT(store_->Commit(low), IsOk());
  EXPECT_EQ(Load().last_token, 100u);
  Reopen();
  EXPECT_EQ(Load().last_token, 100u);
}

TEST_P(LockStoreTest, EmptyBatchChangesNothing) {
  LockStoreBatch batch;
  batch.last_token = 3;
  batch.leases.emplace_back("r", Lease("r", 3));
  ASSERT_THAT(store_->Commit(batch), IsOk());
  ASSERT_THAT(store_->Commit(LockStoreBatch()), IsOk());
  LockStoreState state = Load();
  EXPECT_EQ(state.last_token, 3u);
  EXPECT_THAT(state.leases, ElementsAre(Field(&LeaseRecord::token, 3u)));
}

TEST_P(LockStoreTest, FencePositionsOnlyGrowAndScanInPositionOrder) {
  LockStoreBatch first;
  first.last_token = 9;
  first.fence_positions = {{"a", 4}, {"b", 6}, {"c", 9}};
  ASSERT_THAT(store_->Commit(first), IsOk());
  LockStoreBatch second;
  second.fence_positions = {{"a", 11}, {"b", 5}};  // b would go down: kept at 6
  second.last_token = 11;
  ASSERT_THAT(store_->Commit(second), IsOk());
  auto all = store_->ScanFencePositions(0, 10);
  ASSERT_THAT(all, IsOk());
  EXPECT_THAT(*all, ElementsAre(PositionIs("b", 6), PositionIs("c", 9), PositionIs("a", 11)));
  Reopen();
  auto after_b = store_->ScanFencePositions(6, 1);
  ASSERT_THAT(after_b, IsOk());
  EXPECT_THAT(*after_b, ElementsAre(PositionIs("c", 9)));
  // A restarted store keeps moving the same rows (one per resource).
  LockStoreBatch third;
  third.fence_positions = {{"c", 12}};
  third.last_token = 12;
  ASSERT_THAT(store_->Commit(third), IsOk());
  auto again = store_->ScanFencePositions(0, 10);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(*again, ElementsAre(PositionIs("b", 6), PositionIs("a", 11), PositionIs("c", 12)));
}

TEST_P(LockStoreTest, LoadsEveryRowOfABigTable) {
  // More rows than one page of the etcd store's load (3 in these tests).
  LockStoreBatch batch;
  for (int i = 1; i <= 20; ++i) {
    const std::string name = "r" + std::to_string(i);
    batch.leases.emplace_back(name, Lease(name, i));
    batch.fence_positions.push_back({name, static_cast<uint64_t>(i)});
  }
  batch.last_token = 20;
  ASSERT_THAT(store_->Commit(batch), IsOk());
  Reopen();
  LockStoreState state = Load();
  EXPECT_EQ(state.last_token, 20u);
  EXPECT_EQ(state.leases.size(), 20u);
  auto positions = store_->ScanFencePositions(0, 100);
  ASSERT_THAT(positions, IsOk());
  EXPECT_EQ(positions->size(), 20u);
}

TEST_P(LockStoreTest, WaitersComeBackInArrivalOrder) {
  auto waiter = [](uint64_t seq, std::string resource) {
    return WaiterRecord{seq, std::move(resource), "h" + std::to_string(seq),
                        absl::Seconds(seq), "id" + std::to_string(seq)};
  };
  LockStoreBatch batch;
  for (uint64_t seq : {12, 3, 7, 15}) {
    batch.waiters.emplace_back(seq, waiter(seq, seq % 2 ? "odd" : "even"));
  }
  ASSERT_THAT(store_->Commit(batch), IsOk());
  LockStoreBatch granted;
  granted.waiters.emplace_back(7, std::nullopt);
  ASSERT_THAT(store_->Commit(granted), IsOk());
  Reopen();
  LockStoreState state = Load();
  ASSERT_EQ(state.waiters.size(), 3u);
  EXPECT_THAT(state.waiters, ElementsAre(Field(&WaiterRecord::seq, 3u),
                                         Field(&WaiterRecord::seq, 12u),
                                         Field(&WaiterRecord::seq, 15u)));
  const WaiterRecord& w = state.waiters[1];
  EXPECT_EQ(w.resource, "even");
  EXPECT_EQ(w.holder, "h12");
  EXPECT_EQ(w.ttl, absl::Seconds(12));
  EXPECT_EQ(w.request_id, "id12");
}

INSTANTIATE_TEST_SUITE_P(Stores, LockStoreTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

TEST(SqliteLockStoreTest, UnopenablePathIsAnError) {
  EXPECT_FALSE(SqliteLockStore::Open("/nonexistent-dir/x/l.db").ok());
}

}  // namespace
}  // namespace fencegate::lockservice
