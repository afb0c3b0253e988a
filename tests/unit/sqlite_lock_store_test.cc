#include "lockservice/sqlite_lock_store.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;

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

TEST(SqliteLockStoreTest, CommitThenReopenReturnsWhatWasCommitted) {
  testing::TempDir dir;
  {
    auto store = SqliteLockStore::Open(dir.File("l.db"));
    ASSERT_THAT(store, IsOk());
    LockStoreBatch batch;
    batch.last_token = 5;
    batch.leases.emplace_back("x", Lease("x", 4));
    batch.leases.emplace_back("y", Lease("y", 5));
    ASSERT_THAT((*store)->Commit(batch), IsOk());
    LockStoreBatch del;
    del.leases.emplace_back("x", std::nullopt);
    ASSERT_THAT((*store)->Commit(del), IsOk());
  }
  auto store = SqliteLockStore::Open(dir.File("l.db"));
  ASSERT_THAT(store, IsOk());
  auto state = (*store)->Load();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->last_token, 5u);
  ASSERT_EQ(state->leases.size(), 1u);
  const LeaseRecord& y = state->leases[0];
  EXPECT_EQ(y.resource, "y");
  EXPECT_EQ(y.holder, "holder-y");
  EXPECT_EQ(y.token, 5u);
  EXPECT_EQ(y.ttl, absl::Seconds(7));
  EXPECT_EQ(y.hold_count, 2u);
  EXPECT_THAT(y.request_ids, ::testing::ElementsAre("a", "b"));
}

TEST(SqliteLockStoreTest, CounterNeverGoesDown) {
  testing::TempDir dir;
  auto store = SqliteLockStore::Open(dir.File("l.db"));
  ASSERT_THAT(store, IsOk());
  LockStoreBatch high;
  high.last_token = 100;
  ASSERT_THAT((*store)->Commit(high), IsOk());
  LockStoreBatch low;
  low.last_token = 7;
  ASSERT_THAT((*store)->Commit(low), IsOk());
  EXPECT_EQ((*store)->Load()->last_token, 100u);
}

TEST(SqliteLockStoreTest, UnopenablePathIsAnError) {
  EXPECT_FALSE(SqliteLockStore::Open("/nonexistent-dir/x/l.db").ok());
}

}  // namespace
}  // namespace fencegate::lockservice
