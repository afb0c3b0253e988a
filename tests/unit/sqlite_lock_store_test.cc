// What only the SQLite store does: a file written by an older schema (before
// lock kinds: no holds table, waiters without mode and permits) opens and
// keeps every row, and a row whose mode this version does not know is
// DATA_LOSS, not a guess.
#include "lockservice/core/sqlite_lock_store.h"

#include <memory>
#include <string>

#include "common/core/sqlite.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The schema as SqliteLockStore created it before lock kinds (b38daa7).
constexpr char kSchemaBeforeKinds[] =
    "CREATE TABLE IF NOT EXISTS meta("
    "  key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS leases("
    "  resource TEXT PRIMARY KEY, holder TEXT NOT NULL,"
    "  token INTEGER NOT NULL, ttl_ms INTEGER NOT NULL,"
    "  hold_count INTEGER NOT NULL, request_ids TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS fence_positions("
    "  resource TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS waiters("
    "  seq INTEGER PRIMARY KEY, resource TEXT NOT NULL, holder TEXT NOT NULL,"
    "  ttl_ms INTEGER NOT NULL, request_id TEXT NOT NULL);";

class SqliteLockStoreTest : public ::testing::Test {
 protected:
  // Runs `sql` on the file with a connection of its own, as another
  // version of the store would.
  void Write(const std::string& sql) {
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path_);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec(sql), IsOk());
  }

  std::unique_ptr<SqliteLockStore> Open() {
    absl::StatusOr<std::unique_ptr<SqliteLockStore>> store = SqliteLockStore::Open(path_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }

  testing::TempDir dir_;
  const std::string path_ = dir_.File("locks.db");
};

TEST_F(SqliteLockStoreTest, AFileOfTheSchemaBeforeLockKindsOpensAndKeepsEveryRow) {
  Write(kSchemaBeforeKinds);
  Write(
      "INSERT INTO meta VALUES('last_token', 9);"
      "INSERT INTO leases VALUES('x', 'hx', 7, 5000, 2, 'a\nb');"
      "INSERT INTO fence_positions VALUES('x', 7);"
      "INSERT INTO waiters VALUES(3, 'x', 'h3', 3000, 'id3');"
      "INSERT INTO waiters VALUES(4, 'x', 'h4', 4000, 'id4');");

  std::unique_ptr<SqliteLockStore> store = Open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<LockStoreState> state = store->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 9u);
  ASSERT_EQ(state->leases.size(), 1u);
  const LeaseRecord& x = state->leases[0];
  EXPECT_EQ(x.resource, "x");
  EXPECT_EQ(x.holder, "hx");
  EXPECT_EQ(x.token, 7u);
  EXPECT_EQ(x.ttl, absl::Seconds(5));
  EXPECT_EQ(x.hold_count, 2u);
  EXPECT_THAT(x.request_ids, ElementsAre("a", "b"));
  EXPECT_EQ(x.mode, LeaseMode::kExclusive);
  ASSERT_EQ(state->waiters.size(), 2u);
  for (const WaiterRecord& waiter : state->waiters) {
    // The rows of the old schema waited for exclusive leases.
    EXPECT_EQ(waiter.mode, LeaseMode::kExclusive) << waiter.seq;
    EXPECT_EQ(waiter.permits, 0u) << waiter.seq;
  }
  EXPECT_EQ(state->waiters[0].seq, 3u);
  EXPECT_EQ(state->waiters[0].holder, "h3");
  EXPECT_EQ(state->waiters[0].request_id, "id3");
  EXPECT_EQ(state->waiters[1].ttl, absl::Seconds(4));
  auto positions = store->ScanFencePositions(0, 10);
  ASSERT_THAT(positions, IsOk());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].position, 7u);

  // The migrated file takes the new rows, and opens again as it is.
  LockStoreBatch batch;
  batch.last_token = 11;
  LeaseRecord shared;
  shared.resource = "y";
  shared.holder = "hy";
  shared.token = 10;
  shared.ttl = absl::Seconds(1);
  shared.hold_count = 1;
  shared.mode = LeaseMode::kShared;
  batch.holds.emplace_back(10, shared);
  WaiterRecord permit{11, "z", "h11", absl::Seconds(2), "id11"};
  permit.mode = LeaseMode::kPermit;
  permit.permits = 4;
  batch.waiters.emplace_back(11, permit);
  ASSERT_THAT(store->Commit(batch), IsOk());
  store.reset();
  store = Open();
  ASSERT_NE(store, nullptr);
  state = store->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 11u);
  ASSERT_EQ(state->leases.size(), 2u);
  EXPECT_EQ(state->leases[0].token, 7u);
  EXPECT_EQ(state->leases[1].token, 10u);
  EXPECT_EQ(state->leases[1].mode, LeaseMode::kShared);
  ASSERT_EQ(state->waiters.size(), 3u);
  EXPECT_EQ(state->waiters[2].mode, LeaseMode::kPermit);
  EXPECT_EQ(state->waiters[2].permits, 4u);
}

TEST_F(SqliteLockStoreTest, AnEmptyFileGetsTheWholeSchema) {
  std::unique_ptr<SqliteLockStore> store = Open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<LockStoreState> state = store->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 0u);
  EXPECT_THAT(state->leases, IsEmpty());
  EXPECT_THAT(state->waiters, IsEmpty());
}

TEST_F(SqliteLockStoreTest, AHoldWithAModeThisVersionDoesNotKnowIsDataLoss) {
  Open().reset();
  Write("INSERT INTO holds VALUES(5, 'r', 7, 0, 'h', 1000, 1, '')");
  std::unique_ptr<SqliteLockStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("holds row token 5 has mode 7")));
}

TEST_F(SqliteLockStoreTest, AWaiterWithAModeThisVersionDoesNotKnowIsDataLoss) {
  Open().reset();
  Write("INSERT INTO waiters VALUES(3, 'r', 'h', 1000, 'id', 9, 0)");
  std::unique_ptr<SqliteLockStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("waiters row seq 3 has mode 9")));
}

TEST_F(SqliteLockStoreTest, UnopenablePathIsAnError) {
  EXPECT_FALSE(SqliteLockStore::Open("/nonexistent-dir/x/l.db").ok());
}

}  // namespace
}  // namespace fencegate::lockservice
