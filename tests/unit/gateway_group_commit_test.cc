// FencedStore under concurrency and storage failure, on every storage
// backend (SQLite, PostgreSQL). Interleavings are forced by parking the
// writer thread inside a held commit (no timing, no sleeps): requests made
// meanwhile are all in flight at once and join one batch.
#include <memory>
#include <string>
#include <vector>

#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_store_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::FaultyStorageBackend;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class GroupCommitTest : public GatewayBackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, GroupCommitTest, AllBackends(), BackendName);

// Kleppmann's race inside the gateway: holder 33 and holder 34 both send a
// write while the fence is 32, so a check made on arrival (or on a snapshot
// taken when the batch starts) passes both: "33 checks, 34 checks". Then
// 34's write is applied and 33's comes after it: "34 writes, 33 writes".
// 33 must be refused, because its check runs in the same atomic step as its
// write, after 34's write.
TEST_P(GroupCommitTest, ConcurrentStaleWriteCannotLandAfterNewerOne) {
  ASSERT_THAT(Write("r", 32, Put("k", "from 32")), IsOk());
  const int commits_before = faulty_->commits();
  HoldWriter();

  ReplyPtr<WriteResult> w34 = StartPut("r", 34, "k", "from 34");
  ReplyPtr<WriteResult> w33 = StartPut("r", 33, "k", "from 33");
  EXPECT_FALSE(w34->arrived());
  EXPECT_FALSE(w33->arrived());
  ReleaseWriter();

  ASSERT_OK_AND_ASSIGN(WriteResult accepted, w34->Wait());
  absl::StatusOr<WriteResult> refused = w33->Wait();
  EXPECT_EQ(accepted.max_token, 34u);
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(refused.status()).reason, ErrorReason::kStaleToken);
  EXPECT_EQ(InfoOf(refused.status()).current_token, 34u);
  EXPECT_EQ(ValueOf("r", "k"), "from 34");
  EXPECT_EQ(FenceOf("r"), 34u);
  // Both really were in flight together: one batch (one commit) after the
  // blocker's, applied 34 first.
  EXPECT_EQ(faulty_->commits(), commits_before + 2);
  std::vector<FaultyStorageBackend::Applied> applied = faulty_->applied();
  ASSERT_GE(applied.size(), 2u);
  EXPECT_EQ(applied[applied.size() - 2].token, 34u);
  EXPECT_EQ(applied[applied.size() - 2].outcome, Outcome::kAccepted);
  EXPECT_EQ(applied.back().token, 33u);
  EXPECT_EQ(applied.back().outcome, Outcome::kStaleToken);
}

// 34's write is applied but its commit has not finished when 33 arrives.
// Plain reads still see the committed state, 34 is not acknowledged before
// its commit, and 33 (next batch) is refused.
TEST_P(GroupCommitTest, StaleWriteArrivingDuringNewerCommitIsRejected) {
  ASSERT_THAT(Write("r", 32, Put("k", "from 32")), IsOk());
  HoldNextCommit();
  ReplyPtr<WriteResult> w34 = StartPut("r", 34, "k", "from 34");
  WaitUntilHeld();

  // Uncommitted: invisible to plain reads, Describe and List.
  EXPECT_EQ(ValueOf("r", "k"), "from 32");
  EXPECT_EQ(FenceOf("r"), 32u);
  ReplyPtr<WriteResult> w33 = StartPut("r", 33, "k", "from 33");
  EXPECT_FALSE(w34->arrived());
  ReleaseWriter();

  EXPECT_THAT(w34->Wait(), IsOk());
  absl::StatusOr<WriteResult> refused = w33->Wait();
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(refused.status()).current_token, 34u);
  EXPECT_EQ(ValueOf("r", "k"), "from 34");
}

// A refused request in a batch rolls back alone; the others commit.
TEST_P(GroupCommitTest, RefusedRequestInABatchLeavesTheOthersApplied) {
  ASSERT_THAT(Write("r", 10, Put("k", "v")), IsOk());
  HoldWriter();
  ReplyPtr<WriteResult> first = StartPut("r", 11, "a", "first");
  ReplyPtr<WriteResult> mismatch = StartWrite("r", 12, {Put("b", "x", 42)}, false);
  ReplyPtr<WriteResult> stale = StartPut("r", 9, "c", "stale");
  ReplyPtr<WriteResult> last = StartPut("r", 11, "d", "last");
  ReleaseWriter();

  EXPECT_THAT(first->Wait(), IsOk());
  EXPECT_THAT(mismatch->Wait(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(stale->Wait(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(last->Wait(), IsOk());
  EXPECT_EQ(ValueOf("r", "a"), "first");
  EXPECT_EQ(ValueOf("r", "b"), "<absent>");
  EXPECT_EQ(ValueOf("r", "c"), "<absent>");
  EXPECT_EQ(ValueOf("r", "d"), "last");
  EXPECT_EQ(FenceOf("r"), 11u);  // the mismatched 12 did not raise it
}

// A storage error in the middle of a request (after its fence was raised and
// its first key written) is undone by the request's savepoint alone.
TEST_P(GroupCommitTest, StorageFailureMidRequestRollsBackOnlyThatRequest) {
  ASSERT_THAT(backend_->FailWritesOfKey("poison"), IsOk());
  HoldWriter();
  ReplyPtr<WriteResult> before = StartPut("ok", 1, "k", "before");
  ReplyPtr<WriteResult> failing =
      StartWrite("bad", 5, {Put("a", "written first"), Put("poison", "x")}, true);
  ReplyPtr<WriteResult> after = StartPut("ok", 2, "k", "after");
  ReleaseWriter();

  EXPECT_THAT(before->Wait(), IsOk());
  EXPECT_THAT(failing->Wait(), StatusIs(absl::StatusCode::kUnavailable,
                                        HasSubstr("nothing of it was applied")));
  EXPECT_THAT(after->Wait(), IsOk());
  EXPECT_EQ(ValueOf("bad", "a"), "<absent>");
  EXPECT_EQ(FenceOf("bad"), 0u);
  EXPECT_EQ(ValueOf("ok", "k"), "after");
  EXPECT_EQ(FenceOf("ok"), 2u);
}

// The same with one key: the write runs without a savepoint, and its
// failing key's statement is undone by SQLite; the fence it raised before
// is put back as it was (here: no fence at all), and the batch stands.
TEST_P(GroupCommitTest, StorageFailureOfAOneKeyWriteUndoesItsFenceAlone) {
  ASSERT_THAT(backend_->FailWritesOfKey("poison"), IsOk());
  ASSERT_THAT(Write("raised", 3, Put("k", "v")), IsOk());
  HoldWriter();
  ReplyPtr<WriteResult> before = StartPut("ok", 1, "k", "before");
  ReplyPtr<WriteResult> fresh = StartPut("bad", 5, "poison", "x");
  ReplyPtr<WriteResult> known = StartPut("raised", 7, "poison", "x");
  ReplyPtr<WriteResult> after = StartPut("ok", 2, "k", "after");
  ReleaseWriter();

  EXPECT_THAT(before->Wait(), IsOk());
  EXPECT_THAT(fresh->Wait(), StatusIs(absl::StatusCode::kUnavailable,
                                      HasSubstr("nothing of it was applied")));
  EXPECT_THAT(known->Wait(), StatusIs(absl::StatusCode::kUnavailable,
                                      HasSubstr("nothing of it was applied")));
  EXPECT_THAT(after->Wait(), IsOk());
  EXPECT_EQ(FenceOf("bad"), 0u);
  EXPECT_EQ(FenceOf("raised"), 3u);
  // The revision was put back too: the next write's version follows the last.
  ASSERT_OK_AND_ASSIGN(WriteResult next, Write("raised", 8, Put("k", "w")));
  EXPECT_EQ(next.version, 2u);
  EXPECT_EQ(ValueOf("ok", "k"), "after");
  EXPECT_EQ(FenceOf("ok"), 2u);
}

// The commit of a batch fails: every request in it fails with UNAVAILABLE,
// the refused ones too, and nothing of the batch is visible afterwards.
TEST_P(GroupCommitTest, FailingCommitAcknowledgesNothing) {
  ASSERT_THAT(Write("r", 5, Put("k", "old")), IsOk());
  HoldWriter();
  faulty_->FailNthCommit(1);  // the batch after the blocker's
  ReplyPtr<WriteResult> write = StartPut("r", 6, "k", "new");
  ReplyPtr<WriteResult> multi = StartWrite("r", 6, {Put("a", "1"), Put("b", "2")}, true);
  ReplyPtr<FenceResult> fence = StartFence("other", 9);
  ReplyPtr<ReadResult> read = StartRead("r", "k", 7);
  // Stale against the batch's own fence 6, not the committed 5 (a token
  // below that would be refused at once, by the fence cache).
  ReplyPtr<WriteResult> stale = StartPut("r", 5, "k", "stale");
  ReleaseWriter();

  EXPECT_THAT(blocker_->Wait(), IsOk());
  const auto kNothingApplied =
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("nothing was applied; retry"));
  EXPECT_THAT(write->Wait(), kNothingApplied);
  EXPECT_THAT(multi->Wait(), kNothingApplied);
  EXPECT_THAT(fence->Wait(), kNothingApplied);
  EXPECT_THAT(read->Wait(), kNothingApplied);
  EXPECT_THAT(stale->Wait(), kNothingApplied);
  EXPECT_EQ(ValueOf("r", "k"), "old");
  EXPECT_EQ(ValueOf("r", "a"), "<absent>");
  EXPECT_EQ(FenceOf("r"), 5u);
  EXPECT_EQ(FenceOf("other"), 0u);

  // The store keeps working, and nothing of the failed batch shows up later.
  ASSERT_OK_AND_ASSIGN(WriteResult next, Write("r", 6, Put("k", "next")));
  EXPECT_EQ(next.version, 2u);
  Reopen();
  EXPECT_EQ(ValueOf("r", "k"), "next");
  EXPECT_EQ(FenceOf("other"), 0u);
}

TEST_P(GroupCommitTest, OverloadIsRefusedWithResourceExhausted) {
  limits_.max_pending = 2;
  Reopen();
  HoldWriter();
  ReplyPtr<WriteResult> one = StartPut("r", 1, "a", "1");
  ReplyPtr<WriteResult> two = StartPut("r", 1, "b", "2");

  ReplyPtr<WriteResult> three = StartPut("r", 1, "c", "3");
  EXPECT_TRUE(three->arrived());  // answered at once, without a commit
  EXPECT_THAT(three->Wait(), StatusIs(absl::StatusCode::kResourceExhausted,
                                      HasSubstr("retry with backoff")));
  ReleaseWriter();
  EXPECT_THAT(one->Wait(), IsOk());
  EXPECT_THAT(two->Wait(), IsOk());
  EXPECT_EQ(ValueOf("r", "c"), "<absent>");
}

TEST_P(GroupCommitTest, ManyConcurrentRequestsShareFewCommits) {
  HoldWriter();
  const int commits_before = faulty_->commits();
  std::vector<ReplyPtr<WriteResult>> replies;
  for (int i = 0; i < 50; ++i) {
    replies.push_back(StartPut("r", 1, "k" + std::to_string(i), "v"));
  }
  ReleaseWriter();
  for (auto& reply : replies) EXPECT_THAT(reply->Wait(), IsOk());
  // The blocker's commit, then one for all fifty.
  EXPECT_EQ(faulty_->commits(), commits_before + 1);
}

}  // namespace
}  // namespace fencegate::gateway
