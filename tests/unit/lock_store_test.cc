// The LockStore contract (lock_store.h), on each store (StoreUnderTest):
// what was committed is what a restarted store loads; the counter and the
// fence positions never go down; an empty batch changes nothing; waiters
// come back in arrival order; shared leases and permits (holds) are rows by
// token, many per resource, loaded after the exclusive leases; a batch
// commits whole or not at all.
#include "lockservice/core/lock_store.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::UnorderedElementsAre;

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

// A shared lease (permits == 0) or a permit of `permits`, keyed by `token`.
LeaseRecord Hold(std::string resource, uint64_t token, uint32_t permits = 0) {
  LeaseRecord r = Lease(std::move(resource), token);
  r.holder = "holder-" + std::to_string(token);
  r.hold_count = 1;
  r.request_ids = {"id-" + std::to_string(token)};
  r.mode = permits == 0 ? LeaseMode::kShared : LeaseMode::kPermit;
  r.permits = permits;
  return r;
}

WaiterRecord WaiterRow(uint64_t seq, std::string resource,
                       LeaseMode mode = LeaseMode::kExclusive, uint32_t permits = 0) {
  WaiterRecord w{seq, std::move(resource), "h" + std::to_string(seq), absl::Seconds(seq),
                 "id" + std::to_string(seq)};
  w.mode = mode;
  w.permits = permits;
  return w;
}

// Every field of a loaded lease, for comparing whole rows.
MATCHER_P(SameLease, expected, "") {
  return arg.resource == expected.resource && arg.holder == expected.holder &&
         arg.token == expected.token && arg.ttl == expected.ttl &&
         arg.hold_count == expected.hold_count && arg.mode == expected.mode &&
         arg.permits == expected.permits && arg.request_ids == expected.request_ids;
}

MATCHER_P(SameWaiter, expected, "") {
  return arg.seq == expected.seq && arg.resource == expected.resource &&
         arg.holder == expected.holder && arg.ttl == expected.ttl &&
         arg.request_id == expected.request_id && arg.mode == expected.mode &&
         arg.permits == expected.permits;
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
  LockStoreBatch batch;
  for (uint64_t seq : {12, 3, 7, 15}) {
    batch.waiters.emplace_back(seq, WaiterRow(seq, seq % 2 ? "odd" : "even"));
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

TEST_P(LockStoreTest, HoldsArePutAndDeletedByTokenAndSurviveReopen) {
  LockStoreBatch batch;
  batch.last_token = 5;
  batch.holds.emplace_back(3, Hold("r", 3));
  batch.holds.emplace_back(4, Hold("r", 4));
  batch.holds.emplace_back(5, Hold("s", 5, /*permits=*/3));
  ASSERT_THAT(store_->Commit(batch), IsOk());
  LockStoreBatch release;
  release.holds.emplace_back(4, std::nullopt);
  ASSERT_THAT(store_->Commit(release), IsOk());
  // A renewal rewrites its row: one more hold and request id.
  LeaseRecord renewed = Hold("s", 5, 3);
  renewed.hold_count = 2;
  renewed.request_ids.push_back("again");
  LockStoreBatch renew;
  renew.holds.emplace_back(5, renewed);
  ASSERT_THAT(store_->Commit(renew), IsOk());
  Reopen();
  LockStoreState state = Load();
  EXPECT_EQ(state.last_token, 5u);
  EXPECT_THAT(state.leases,
              UnorderedElementsAre(SameLease(Hold("r", 3)), SameLease(renewed)));
}

TEST_P(LockStoreTest, SeveralHoldsOnOneResourceLoadAfterTheExclusiveLeases) {
  // More holds than one page of the etcd store's load (3 in these tests),
  // beside an exclusive lease elsewhere; handed over through LoadInto().
  LockStoreBatch batch;
  batch.last_token = 9;
  batch.leases.emplace_back("x", Lease("x", 9));
  std::vector<LeaseRecord> holds;
  for (uint64_t token = 1; token <= 7; ++token) holds.push_back(Hold("r", token));
  for (const LeaseRecord& hold : holds) batch.holds.emplace_back(hold.token, hold);
  batch.waiters.emplace_back(8, WaiterRow(8, "r"));
  ASSERT_THAT(store_->Commit(batch), IsOk());
  Reopen();

  class Recorder final : public LoadSink {
   public:
    void OnLastToken(uint64_t last_token) override {
      calls.push_back("token " + std::to_string(last_token));
    }
    void ExpectLeases(size_t count) override {
      calls.push_back("expect " + std::to_string(count));
    }
    void OnLease(LeaseRecord& lease) override {
      calls.push_back("lease " + lease.resource);
      leases.push_back(lease);
    }
    void OnWaiter(WaiterRecord& waiter) override {
      calls.push_back("waiter " + std::to_string(waiter.seq));
    }
    std::vector<std::string> calls;
    std::vector<LeaseRecord> leases;
  } sink;
  ASSERT_THAT(store_->LoadInto(sink), IsOk());
  EXPECT_THAT(sink.calls, ElementsAre("token 9", "expect 8", "lease x", "lease r",
                                      "lease r", "lease r", "lease r", "lease r",
                                      "lease r", "lease r", "waiter 8"));
  ASSERT_EQ(sink.leases.size(), 8u);
  EXPECT_THAT(sink.leases[0], SameLease(Lease("x", 9)));
  std::vector<LeaseRecord> loaded(sink.leases.begin() + 1, sink.leases.end());
  std::sort(loaded.begin(), loaded.end(),
            [](const LeaseRecord& a, const LeaseRecord& b) { return a.token < b.token; });
  for (size_t i = 0; i < holds.size(); ++i) {
    EXPECT_THAT(loaded[i], SameLease(holds[i])) << "token " << holds[i].token;
  }
}

TEST_P(LockStoreTest, ABatchOfLeasesHoldsAndWaitersCommitsWholeOrNotAtAll) {
  LockStoreBatch first;
  first.last_token = 4;
  first.leases.emplace_back("x", Lease("x", 1));
  first.holds.emplace_back(2, Hold("r", 2));
  first.holds.emplace_back(3, Hold("s", 3, /*permits=*/2));
  first.waiters.emplace_back(10, WaiterRow(10, "r", LeaseMode::kExclusive));
  first.waiters.emplace_back(11, WaiterRow(11, "s", LeaseMode::kPermit, 2));
  first.fence_positions.push_back({"x", 1});
  ASSERT_THAT(store_->Commit(first), IsOk());
  LockStoreState before = Load();
  ASSERT_EQ(before.leases.size(), 3u);
  ASSERT_EQ(before.waiters.size(), 2u);

  // Every kind of row changes, and the batch fails at its end: two
  // resources at one fence position break the store's uniqueness (SQLite's
  // UNIQUE column, etcd's one put per key in a txn), after the other rows
  // were written in the transaction.
  LockStoreBatch failing;
  failing.last_token = 8;
  failing.leases.emplace_back("x", std::nullopt);
  failing.leases.emplace_back("y", Lease("y", 5));
  failing.holds.emplace_back(2, std::nullopt);
  failing.holds.emplace_back(6, Hold("r", 6));
  failing.holds.emplace_back(7, Hold("s", 7, /*permits=*/2));
  failing.waiters.emplace_back(10, std::nullopt);
  failing.waiters.emplace_back(12, WaiterRow(12, "r", LeaseMode::kShared));
  failing.fence_positions.push_back({"y", 8});
  failing.fence_positions.push_back({"z", 8});
  EXPECT_FALSE(store_->Commit(failing).ok());

  Reopen();  // etcd: the failed commit ended the term; a new one loads
  LockStoreState after = Load();
  EXPECT_EQ(after.last_token, 4u);
  ASSERT_EQ(after.leases.size(), before.leases.size());
  for (size_t i = 0; i < after.leases.size(); ++i) {
    EXPECT_THAT(after.leases[i], SameLease(before.leases[i]));
  }
  ASSERT_EQ(after.waiters.size(), before.waiters.size());
  for (size_t i = 0; i < after.waiters.size(); ++i) {
    EXPECT_THAT(after.waiters[i], SameWaiter(before.waiters[i]));
  }
  auto positions = store_->ScanFencePositions(0, 10);
  ASSERT_THAT(positions, IsOk());
  EXPECT_THAT(*positions, ElementsAre(PositionIs("x", 1)));
}

TEST_P(LockStoreTest, AWaitersModeAndPermitsRoundTrip) {
  const WaiterRecord exclusive = WaiterRow(1, "r", LeaseMode::kExclusive);
  const WaiterRecord shared = WaiterRow(2, "r", LeaseMode::kShared);
  const WaiterRecord permit = WaiterRow(3, "s", LeaseMode::kPermit, 10000);
  LockStoreBatch batch;
  batch.waiters.emplace_back(3, permit);
  batch.waiters.emplace_back(1, exclusive);
  batch.waiters.emplace_back(2, shared);
  ASSERT_THAT(store_->Commit(batch), IsOk());
  Reopen();
  EXPECT_THAT(Load().waiters,
              ElementsAre(SameWaiter(exclusive), SameWaiter(shared), SameWaiter(permit)));
}

INSTANTIATE_TEST_SUITE_P(Stores, LockStoreTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
