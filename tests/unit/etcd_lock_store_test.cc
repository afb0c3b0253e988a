// What only the etcd store does: every call is fenced by its term, so a
// leader whose term ended can neither commit nor answer from memory nor
// load, and any failed call ends the term for good; a hold is one txn
// operation; rows it cannot read are DATA_LOSS. On a single-member etcd
// started by the test (StoreUnderTest's shared cluster, through
// shared_etcd_fixture.h).
#include "lockservice/etcd/etcd_lock_store.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockservice/etcd/lock_records.pb.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/shared_etcd_fixture.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class EtcdLockStoreTest : public testing::SharedEtcdTest {
 protected:
  void SetUp() override {
    SharedEtcdTest::SetUp();
    options_.prefix = UniquePrefix("etcd-store-test");
  }

  // A store for a new term (the previous one must have ended), loaded as
  // LockManager does before it commits.
  std::unique_ptr<EtcdLockStore> NewTerm(LeaderGuard* guard_out = nullptr) {
    auto guard = testing::TakeLeadership(*client_, EtcdLeaderKey(options_.prefix),
                                         absl::Seconds(600));
    EXPECT_THAT(guard, IsOk());
    if (!guard.ok()) return nullptr;
    if (guard_out != nullptr) *guard_out = *guard;
    auto store = std::make_unique<EtcdLockStore>(
        client_, options_, *guard, [this](const absl::Status&) { ++terms_lost_; });
    EXPECT_THAT(store->Load(), IsOk());
    return store;
  }

  // What the end of a term looks like from etcd: the leader key is gone
  // (its lease expired while the leader was paused, say).
  void Expire(const LeaderGuard& guard) {
    ASSERT_THAT(client_->LeaseRevoke(guard.lease_id, absl::Now() + absl::Seconds(30)),
                IsOk());
  }

  static LockStoreBatch Grant(const std::string& resource, uint64_t token) {
    LockStoreBatch batch;
    batch.last_token = token;
    LeaseRecord lease;
    lease.resource = resource;
    lease.holder = "h";
    lease.token = token;
    lease.ttl = absl::Seconds(10);
    lease.hold_count = 1;
    batch.leases.emplace_back(resource, lease);
    batch.fence_positions.push_back({resource, token});
    return batch;
  }

  // Writes `row` at `key` (under the prefix) behind the store's back, as
  // another version would.
  void PutRow(const std::string& key, const google::protobuf::MessageLite& row) {
    etcdserverpb::TxnRequest txn;
    auto* put = txn.add_success()->mutable_request_put();
    put->set_key(options_.prefix + key);
    row.SerializeToString(put->mutable_value());
    ASSERT_THAT(client_->Txn(txn, absl::Now() + absl::Seconds(30)), IsOk());
  }

  EtcdLockStoreOptions options_;
  int terms_lost_ = 0;
};

TEST_F(EtcdLockStoreTest, ADeposedLeaderCannotCommitAndItsTermEnds) {
  LeaderGuard old_guard;
  std::unique_ptr<EtcdLockStore> old_term = NewTerm(&old_guard);
  ASSERT_THAT(old_term->Commit(Grant("r", 1)), IsOk());
  Expire(old_guard);
  std::unique_ptr<EtcdLockStore> new_term = NewTerm();
  ASSERT_THAT(new_term->Commit(Grant("s", 2)), IsOk());

  // The old leader, resumed, still believes it leads: its commit is refused.
  EXPECT_THAT(old_term->Commit(Grant("r", 2)),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("no longer leads")));
  EXPECT_EQ(terms_lost_, 1);
  // Nothing of it was applied: the new term's state stands.
  absl::StatusOr<LockStoreState> state = new_term->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 2u);
  ASSERT_EQ(state->leases.size(), 2u);
  for (const LeaseRecord& lease : state->leases) {
    EXPECT_EQ(lease.token, lease.resource == "r" ? 1u : 2u) << lease.resource;
  }
}

TEST_F(EtcdLockStoreTest, AnEmptyBatchIsABarrierThatADeposedLeaderFails) {
  LeaderGuard guard;
  std::unique_ptr<EtcdLockStore> store = NewTerm(&guard);
  EXPECT_THAT(store->Commit(LockStoreBatch()), IsOk());
  Expire(guard);
  // Replies decided from memory (a Describe, a refused try-lock) must not
  // leave a leader whose term ended.
  EXPECT_THAT(store->Commit(LockStoreBatch()), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(terms_lost_, 1);
}

TEST_F(EtcdLockStoreTest, ADeposedLeaderCannotLoad) {
  LeaderGuard guard;
  std::unique_ptr<EtcdLockStore> store = NewTerm(&guard);
  Expire(guard);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(terms_lost_, 1);
}

TEST_F(EtcdLockStoreTest, AFailedCallEndsTheTermForGood) {
  LeaderGuard guard;
  std::unique_ptr<EtcdLockStore> store = NewTerm(&guard);
  Expire(guard);
  ASSERT_FALSE(store->Commit(Grant("r", 1)).ok());
  // Even once this process could lead again, the ended store refuses at
  // once: a new term is a new store, loaded afresh.
  std::unique_ptr<EtcdLockStore> next = NewTerm();
  EXPECT_THAT(store->Commit(LockStoreBatch()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("term")));
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(terms_lost_, 1);
}

TEST_F(EtcdLockStoreTest, EndTermRefusesWithoutAskingEtcd) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  store->EndTerm();
  EXPECT_THAT(store->Commit(Grant("r", 1)), StatusIs(absl::StatusCode::kUnavailable));
  auto scan = store->ScanFencePositions(0, 10);  // committed state: still readable
  ASSERT_THAT(scan, IsOk());
  EXPECT_TRUE(scan->empty());
}

TEST_F(EtcdLockStoreTest, ARowThatDoesNotParseIsDataLoss) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  ASSERT_THAT(store->Commit(Grant("r", 1)), IsOk());
  etcdserverpb::TxnRequest txn;
  auto* put = txn.add_success()->mutable_request_put();
  put->set_key(options_.prefix + "token");
  put->set_value("not a number");
  ASSERT_THAT(client_->Txn(txn, absl::Now() + absl::Seconds(30)), IsOk());
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("token")));
}

TEST_F(EtcdLockStoreTest, AHoldIsOneTxnOperation) {
  // etcd refuses a txn of more than --max-txn-ops operations (128 by
  // default, as the test cluster runs): the counter and 127 holds fit, one
  // more hold does not. So each hold costs exactly one operation, as
  // kEtcdMaxOpsPerItem counts it.
  auto holds = [](uint64_t first, uint64_t count) {
    LockStoreBatch batch;
    for (uint64_t token = first; token < first + count; ++token) {
      LeaseRecord hold;
      hold.resource = "r";
      hold.holder = absl::StrCat("h", token);
      hold.token = token;
      hold.ttl = absl::Seconds(10);
      hold.hold_count = 1;
      hold.mode = LeaseMode::kShared;
      batch.holds.emplace_back(token, hold);
    }
    batch.last_token = first + count - 1;
    return batch;
  };
  LeaderGuard guard;
  std::unique_ptr<EtcdLockStore> store = NewTerm(&guard);
  ASSERT_THAT(store->Commit(holds(1, 127)), IsOk());
  EXPECT_THAT(store->Commit(holds(128, 128)), StatusIs(absl::StatusCode::kUnavailable));
  Expire(guard);
  std::unique_ptr<EtcdLockStore> next = NewTerm();
  absl::StatusOr<LockStoreState> state = next->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 127u);
  EXPECT_EQ(state->leases.size(), 127u);
}

TEST_F(EtcdLockStoreTest, AHoldRowOfAModeThisVersionDoesNotKnowIsDataLoss) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  etcdstore::v1::HoldRow row;
  row.set_resource("r");
  row.set_token(5);
  row.set_mode(9);  // written by a newer version
  PutRow("hold/00000000000000000005", row);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("mode 9")));
}

TEST_F(EtcdLockStoreTest, AHoldRowUnderAnotherTokensKeyIsDataLoss) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  etcdstore::v1::HoldRow row;
  row.set_resource("r");
  row.set_token(5);
  row.set_mode(static_cast<uint32_t>(LeaseMode::kShared));
  PutRow("hold/00000000000000000006", row);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("hold/00000000000000000006")));
}

TEST_F(EtcdLockStoreTest, AWaiterRowOfAModeThisVersionDoesNotKnowIsDataLoss) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  etcdstore::v1::WaiterRow row;
  row.set_resource("r");
  row.set_request_id("id");
  row.set_mode(3);
  PutRow("wait/00000000000000000002", row);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("mode 3")));
}

}  // namespace
}  // namespace fencegate::lockservice
