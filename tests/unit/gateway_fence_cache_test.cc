// The gateway's fence cache (gateway/fence_cache.h): alone, and in the
// FencedStore on SQLite, the one backend whose process writes its fences
// alone. It may refuse a token below a fence that is committed, at once; it
// must never accept, never learn from a commit that failed, and it starts
// empty after a restart. That PostgreSQL has none, and why, is in
// gateway_postgres_test.cc.
#include "gateway/fence_cache.h"

#include <algorithm>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_store_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::FaultyStorageBackend;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

TEST(FenceCacheTest, KnowsNothingUntilTaught) {
  FenceCache cache(4);
  EXPECT_EQ(cache.Floor("r"), 0u);
  cache.Learn("r", 7);
  EXPECT_EQ(cache.Floor("r"), 7u);
  EXPECT_EQ(cache.Floor("other"), 0u);
}

TEST(FenceCacheTest, NeverGoesDown) {
  FenceCache cache(4);
  cache.Learn("r", 7);
  cache.Learn("r", 5);  // an older answer, learned late
  EXPECT_EQ(cache.Floor("r"), 7u);
  cache.Learn("r", 9);
  EXPECT_EQ(cache.Floor("r"), 9u);
}

TEST(FenceCacheTest, StartsOverWhenFull) {
  FenceCache cache(2);
  cache.Learn("a", 1);
  cache.Learn("b", 2);
  cache.Learn("a", 3);  // known already: no room needed
  EXPECT_EQ(cache.size(), 2u);
  cache.Learn("c", 4);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Floor("a"), 0u);
  EXPECT_EQ(cache.Floor("b"), 0u);
  EXPECT_EQ(cache.Floor("c"), 4u);
}

TEST(FenceCacheTest, CapacityZeroKeepsNothing) {
  FenceCache cache(0);
  cache.Learn("r", 7);
  EXPECT_EQ(cache.Floor("r"), 0u);
  EXPECT_EQ(cache.size(), 0u);
}

class FenceCacheStoreTest : public GatewayStoreTest {
 protected:
  // Whether the backend decided an op with `token`.
  bool Reached(uint64_t token) {
    std::vector<FaultyStorageBackend::Applied> applied = faulty_->applied();
    return std::any_of(applied.begin(), applied.end(),
                       [&](const FaultyStorageBackend::Applied& a) { return a.token == token; });
  }
};

// With the writer parked in another commit, a token below the committed
// fence is answered at once, as storage would answer it, and never reaches
// the backend.
TEST_F(FenceCacheStoreTest, ATokenBelowACommittedFenceIsRefusedAtOnce) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  HoldWriter();

  ReplyPtr<WriteResult> stale = StartPut("r", 4, "k", "from 4");
  ReplyPtr<ReadResult> read = StartRead("r", "k", 3);
  EXPECT_TRUE(stale->arrived());
  EXPECT_TRUE(read->arrived());
  absl::StatusOr<WriteResult> refused = stale->Wait();
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kAborted, HasSubstr("token 5")));
  EXPECT_EQ(InfoOf(refused.status()).current_token, 5u);
  EXPECT_THAT(read->Wait(), StatusIs(absl::StatusCode::kAborted));

  ReleaseWriter();
  EXPECT_THAT(blocker_->Wait(), IsOk());
  EXPECT_FALSE(Reached(4));
  EXPECT_FALSE(Reached(3));
  EXPECT_EQ(ValueOf("r", "k"), "from 5");
}

// A token at the fence proves nothing to the cache: it waits for the
// transaction like any other.
TEST_F(FenceCacheStoreTest, ATokenAtTheFenceGoesToStorage) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  HoldWriter();
  ReplyPtr<WriteResult> equal = StartPut("r", 5, "k", "again 5");
  EXPECT_FALSE(equal->arrived());
  ReleaseWriter();
  EXPECT_THAT(equal->Wait(), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "again 5");
}

// The batch that raised the fence to 8 failed to commit: the cache must not
// have learned 8, or it would refuse token 6, which storage accepts.
TEST_F(FenceCacheStoreTest, AFailedCommitTeachesItNothing) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  faulty_->FailNthCommit(1);
  EXPECT_THAT(Write("r", 8, Put("k", "from 8")), StatusIs(absl::StatusCode::kUnavailable));

  EXPECT_THAT(Write("r", 6, Put("k", "from 6")), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "from 6");
}

// A restart starts the cache empty; a committed (plain) read fills it again.
TEST_F(FenceCacheStoreTest, ARestartStartsItEmptyAndReadsFillIt) {
  ASSERT_THAT(Write("r", 9, Put("k", "from 9")), IsOk());
  Reopen();

  HoldWriter();
  ReplyPtr<WriteResult> unknown = StartPut("r", 8, "k", "from 8");
  EXPECT_FALSE(unknown->arrived());  // storage decides
  ReleaseWriter();
  EXPECT_THAT(unknown->Wait(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_TRUE(Reached(8));

  Reopen();
  EXPECT_EQ(ValueOf("r", "k"), "from 9");  // a plain read: learns fence 9
  HoldWriter();
  ReplyPtr<WriteResult> known = StartPut("r", 7, "k", "from 7");
  EXPECT_TRUE(known->arrived());
  EXPECT_THAT(known->Wait(), StatusIs(absl::StatusCode::kAborted));
  ReleaseWriter();
  EXPECT_FALSE(Reached(7));
}

// --fence_cache_resources=0: every stale token goes to storage.
TEST_F(FenceCacheStoreTest, OffSendsEveryTokenToStorage) {
  limits_.fence_cache_resources = 0;
  Reopen();
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  EXPECT_THAT(Write("r", 4, Put("k", "from 4")), StatusIs(absl::StatusCode::kAborted));
  EXPECT_TRUE(Reached(4));
}

}  // namespace
}  // namespace fencegate::gateway
