// The lock service's stores open fencegate 0.1.0's state (the fixtures of
// make_fixtures.sh): on SQLite and on etcd (a single-member etcd this
// process starts, store_under_test.h). Each store loads every lease, hold,
// waiter and fence position as 0.1.0 left them, stamps the state with its
// format once (a second open reads only), and its counter goes on above
// every 0.1.0 token; state of a newer format is refused, naming both
// formats, and nothing is written to it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "common/core/sqlite.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "lockservice/etcd/etcd_lock_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"
#include "tests/upgrade/sqlite_upgrade_test.h"
#include "tests/upgrade/upgrade_fixtures.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records as text, so a difference shows whole. Modes are the numbers the
// format stores (0 exclusive, 1 shared, 2 permit).
std::string Show(const LeaseRecord& l) {
  return absl::StrCat(l.resource, " ", l.holder, " token ", l.token, " ttl ",
                      absl::FormatDuration(l.ttl), " holds ", l.hold_count, " ids [",
                      absl::StrJoin(l.request_ids, ","), "] mode ",
                      static_cast<int>(l.mode), " permits ", l.permits);
}
std::string Show(const WaiterRecord& w) {
  return absl::StrCat("seq ", w.seq, " ", w.resource, " ", w.holder, " ttl ",
                      absl::FormatDuration(w.ttl), " id ", w.request_id, " mode ",
                      static_cast<int>(w.mode), " permits ", w.permits);
}
template <typename T>
std::vector<std::string> ShowAll(const std::vector<T>& records) {
  std::vector<std::string> shown;
  for (const T& record : records) shown.push_back(Show(record));
  return shown;
}

// What 0.1.0 left (make_fixtures.sh's lock_calls), on either store.
void ExpectZeroOneZeroState(LockStore& store) {
  absl::StatusOr<LockStoreState> state = store.Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, testing::kZeroOneZeroLastToken);
  EXPECT_THAT(
      ShowAll(state->leases),
      ElementsAre("orders alice token 1 ttl 1h holds 2 ids [a-1,a-2] mode 0 permits 0",
                  "report reader-1 token 2 ttl 1h holds 1 ids [r-1] mode 1 permits 0",
                  "report reader-2 token 3 ttl 30m holds 1 ids [r-2] mode 1 permits 0",
                  "workers worker-1 token 4 ttl 1h holds 1 ids [p-1] mode 2 permits 3",
                  "workers worker-2 token 5 ttl 1h holds 1 ids [p-2] mode 2 permits 3",
                  "workers worker-3 token 6 ttl 1h holds 1 ids [p-3] mode 2 permits 3"));
  EXPECT_THAT(ShowAll(state->waiters),
              ElementsAre("seq 1 orders bob ttl 20m id b-1 mode 0 permits 0",
                          "seq 2 orders carol ttl 10m id c-1 mode 1 permits 0",
                          "seq 3 report writer ttl 5m id w-1 mode 0 permits 0",
                          "seq 4 workers worker-4 ttl 1h id p-4 mode 2 permits 3"));
  absl::StatusOr<std::vector<FencePosition>> fences = store.ScanFencePositions(0, 100);
  ASSERT_THAT(fences, IsOk());
  std::vector<std::string> shown;
  for (const FencePosition& f : *fences) {
    shown.push_back(absl::StrCat(f.resource, " ", f.position));
  }
  EXPECT_THAT(shown, ElementsAre("orders 1", "done 7"));
}

// A manager over `store` takes the 0.1.0 state as its own: the leases are
// held (alice's twice, with her queue behind her), and a new grant's token
// is above every 0.1.0 token.
void ExpectTheCounterToGoOn(LockStore& store) {
  testing::FakeClock clock;
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(&store, &clock, LockLimits());
  ASSERT_THAT(manager, IsOk());
  std::optional<absl::StatusOr<ResourceInfo>> orders;
  (*manager)->Describe("orders",
                       [&](absl::StatusOr<ResourceInfo> info) { orders = info; });
  std::optional<absl::StatusOr<AcquireResult>> fresh;
  AcquireArgs args;
  args.resource = "after-the-upgrade";
  args.holder = "erin";
  args.ttl = absl::Seconds(10);
  (*manager)->Acquire((*manager)->NewCallId(), args,
                      [&](absl::StatusOr<AcquireResult> result) { fresh = result; });
  (*manager)->Sync();
  ASSERT_TRUE(orders.has_value() && fresh.has_value());
  ASSERT_THAT(*orders, IsOk());
  EXPECT_TRUE((*orders)->held);
  EXPECT_EQ((*orders)->holder, "alice");
  EXPECT_EQ((*orders)->token, 1u);
  EXPECT_EQ((*orders)->hold_count, 2u);
  EXPECT_EQ((*orders)->waiters, 2u);
  ASSERT_THAT(*fresh, IsOk());
  EXPECT_TRUE((*fresh)->acquired);
  EXPECT_EQ((*fresh)->token, testing::kZeroOneZeroLastToken + 1);
  (*manager)->Shutdown();
}

// ------------------------------------------------------------------ SQLite

class SqliteLockStoreUpgradeTest : public testing::SqliteUpgradeTest<SqliteLockStore> {
 protected:
  SqliteLockStoreUpgradeTest()
      : SqliteUpgradeTest(
            "lockservice-sqlite-0.1.0.sql", "locks.db",
            [](const std::string& path) { return SqliteLockStore::Open(path); }) {}
};

TEST_F(SqliteLockStoreUpgradeTest, TheZeroOneZeroFileLoadsWholeAndIsMigratedOnce) {
  ExpectMigratedOnce(ExpectZeroOneZeroState);
}

TEST_F(SqliteLockStoreUpgradeTest, TheCounterGoesOnAboveEveryZeroOneZeroToken) {
  ExpectOnOpen(ExpectTheCounterToGoOn);
}

TEST_F(SqliteLockStoreUpgradeTest, ANewerFormatIsRefusedNamingBothAndTheFileIsUnchanged) {
  ExpectANewerFormatRefused();
  EXPECT_EQ(Marker(), absl::StrCat(SqliteLockStore::kStateFormat + 1));
}

TEST_F(SqliteLockStoreUpgradeTest, AMarkerThatIsNoFormatIsDataLoss) {
  {
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path_);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec("INSERT INTO meta VALUES('format', 'two')"), IsOk());
  }
  EXPECT_THAT(SqliteLockStore::Open(path_),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr(path_), HasSubstr("'two', not a format number"))));
}

// -------------------------------------------------------------------- etcd

class EtcdLockStoreUpgradeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::EtcdCluster*> cluster = testing::SharedEtcdCluster();
    ASSERT_THAT(cluster, IsOk());
    client_ = &(*cluster)->client();
    static int next = 0;
    options_.prefix = absl::StrCat("/upgrade-test-", getpid(), "-", next++, "/");
    options_.load_page = 3;  // several pages
    absl::StatusOr<std::string> fixture =
        testing::ReadFixture("lockservice-etcd-0.1.0.txt");
    ASSERT_THAT(fixture, IsOk());
    for (absl::string_view line : absl::StrSplit(*fixture, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "#")) continue;
      std::vector<std::string> key_value = absl::StrSplit(line, absl::MaxSplits(' ', 1));
      ASSERT_EQ(key_value.size(), 2u) << line;
      std::string value;
      ASSERT_TRUE(absl::Base64Unescape(key_value[1], &value)) << line;
      Put(key_value[0], value);
    }
  }
  void TearDown() override { EndTerm(); }

  void Put(const std::string& key, const std::string& value) {
    etcdserverpb::TxnRequest txn;
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(options_.prefix + key);
    put->set_value(value);
    ASSERT_THAT(client_->Txn(txn, absl::Now() + absl::Seconds(30)), IsOk());
  }

  // The store of a new term, not loaded yet (the previous term ended).
  std::unique_ptr<EtcdLockStore> NewTerm() {
    EndTerm();
    absl::StatusOr<LeaderGuard> guard = testing::TakeLeadership(
        *client_, EtcdLeaderKey(options_.prefix), absl::Seconds(600));
    EXPECT_THAT(guard, IsOk());
    if (!guard.ok()) return nullptr;
    lease_ = guard->lease_id;
    return std::make_unique<EtcdLockStore>(client_, options_, *guard, nullptr);
  }
  void EndTerm() {
    if (lease_ != 0) {
      client_->LeaseRevoke(lease_, absl::Now() + absl::Seconds(30)).IgnoreError();
    }
    lease_ = 0;
  }

  // The marker key ("" if absent) and etcd's revision: what a read sees.
  struct Seen {
    std::string marker;
    int64_t revision = 0;
  };
  Seen Look() {
    etcdserverpb::RangeRequest range;
    range.set_key(EtcdFormatKey(options_.prefix));
    absl::StatusOr<etcdserverpb::RangeResponse> read =
        client_->Range(range, absl::Now() + absl::Seconds(30));
    EXPECT_THAT(read, IsOk());
    if (!read.ok()) return {};
    return {read->kvs().empty() ? "" : read->kvs(0).value(), read->header().revision()};
  }

  etcd::EtcdClient* client_ = nullptr;
  EtcdLockStoreOptions options_;
  int64_t lease_ = 0;
};

TEST_F(EtcdLockStoreUpgradeTest, TheZeroOneZeroKeysLoadWholeAndAreMigratedOnce) {
  EXPECT_EQ(Look().marker, "");
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  ASSERT_NE(store, nullptr);
  ExpectZeroOneZeroState(*store);
  EXPECT_FALSE(store->format_at_open().marked.has_value());
  EXPECT_TRUE(store->format_at_open().migrated());
  EXPECT_EQ(Look().marker, absl::StrCat(EtcdLockStore::kStateFormat));

  // The next term finds the format: it loads the same and writes nothing.
  store = NewTerm();
  ASSERT_NE(store, nullptr);
  const Seen before = Look();
  ExpectZeroOneZeroState(*store);
  EXPECT_EQ(store->format_at_open().marked, EtcdLockStore::kStateFormat);
  EXPECT_FALSE(store->format_at_open().migrated());
  EXPECT_EQ(Look().revision, before.revision) << "the second load wrote to etcd";
}

TEST_F(EtcdLockStoreUpgradeTest, TheCounterGoesOnAboveEveryZeroOneZeroToken) {
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  ASSERT_NE(store, nullptr);
  ExpectTheCounterToGoOn(*store);
}

TEST_F(EtcdLockStoreUpgradeTest, ANewerFormatIsRefusedNamingBothAndNothingIsWritten) {
  const int64_t newer = EtcdLockStore::kStateFormat + 1;
  Put("format", absl::StrCat(newer));
  const auto refused =
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr(absl::StrCat("etcd prefix ", options_.prefix,
                                            " has state format ", newer)),
                     HasSubstr(absl::StrCat(ProjectVersion(), " reads formats up to ",
                                            EtcdLockStore::kStateFormat)),
                     HasSubstr("upgrade the binary or restore a backup")));
  // At the server's start, before any term.
  EXPECT_THAT(
      CheckEtcdStateFormat(*client_, options_.prefix, absl::Now() + absl::Seconds(30)),
      refused);
  // And by a term's load.
  std::unique_ptr<EtcdLockStore> store = NewTerm();
  ASSERT_NE(store, nullptr);
  const Seen before = Look();
  EXPECT_THAT(store->Load(), refused);
  const Seen after = Look();
  EXPECT_EQ(after.revision, before.revision) << "the refused load wrote to etcd";
  EXPECT_EQ(after.marker, absl::StrCat(newer));
}

TEST_F(EtcdLockStoreUpgradeTest, TheStartCheckPassesEveryFormatItReads) {
  EXPECT_THAT(
      CheckEtcdStateFormat(*client_, options_.prefix, absl::Now() + absl::Seconds(30)),
      IsOk());  // no marker: 0.1.0's
  Put("format", absl::StrCat(EtcdLockStore::kStateFormat));
  EXPECT_THAT(
      CheckEtcdStateFormat(*client_, options_.prefix, absl::Now() + absl::Seconds(30)),
      IsOk());
  Put("format", "two");
  EXPECT_THAT(
      CheckEtcdStateFormat(*client_, options_.prefix, absl::Now() + absl::Seconds(30)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("'two', not a format number")));
}

}  // namespace
}  // namespace fencegate::lockservice
