// FencedStore semantics on every storage backend (SQLite, PostgreSQL): the
// fence, versions, compare-and-set, all-or-nothing multi-writes, paging,
// restart, and shared lease's tokens (fenced reads that move no fence).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/base/errors.h"
#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_store_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FencedStoreTest : public GatewayBackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, FencedStoreTest, AllBackends(), BackendName);

TEST_P(FencedStoreTest, StaleTokenIsRejectedWithTheCurrentMaxToken) {
  ASSERT_THAT(Write("r", 34, Put("k", "from 34")), IsOk());

  absl::StatusOr<WriteResult> stale = Write("r", 33, Put("k", "from 33"));

  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted,
                              HasSubstr("acquire the lock again")));
  ErrorInfo info = InfoOf(stale.status());
  EXPECT_EQ(info.reason, ErrorReason::kStaleToken);
  EXPECT_EQ(info.current_token, 34u);
  EXPECT_EQ(ValueOf("r", "k"), "from 34");
  EXPECT_EQ(FenceOf("r"), 34u);
}

TEST_P(FencedStoreTest, EqualTokenIsAccepted) {
  ASSERT_OK_AND_ASSIGN(WriteResult first, Write("r", 34, Put("k", "one")));
  ASSERT_OK_AND_ASSIGN(WriteResult second, Write("r", 34, Put("k", "two")));

  EXPECT_EQ(second.max_token, 34u);
  EXPECT_GT(second.version, first.version);
  EXPECT_EQ(ValueOf("r", "k"), "two");
}

TEST_P(FencedStoreTest, HigherTokenIsAcceptedAndRaisesTheFence) {
  ASSERT_OK_AND_ASSIGN(WriteResult w33, Write("r", 33, Put("k", "from 33")));
  EXPECT_EQ(w33.max_token, 33u);

  ASSERT_OK_AND_ASSIGN(WriteResult w34, Write("r", 34, Put("k", "from 34")));

  EXPECT_EQ(w34.max_token, 34u);
  EXPECT_EQ(FenceOf("r"), 34u);
  EXPECT_THAT(Write("r", 33, Put("k", "again 33")), StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(ValueOf("r", "k"), "from 34");
}

TEST_P(FencedStoreTest, FencesAreKeptPerResource) {
  ASSERT_THAT(Write("a", 50, Put("k", "a")), IsOk());
  EXPECT_THAT(Write("b", 3, Put("k", "b")), IsOk());
  EXPECT_EQ(FenceOf("a"), 50u);
  EXPECT_EQ(FenceOf("b"), 3u);
}

TEST_P(FencedStoreTest, FencedReadRaisesTheFenceAndShutsOutTheOlderToken) {
  ASSERT_THAT(Write("r", 33, Put("k", "from 33")), IsOk());

  ASSERT_OK_AND_ASSIGN(ReadResult read, Read("r", "k", 34));

  EXPECT_TRUE(read.found);
  EXPECT_EQ(read.value, "from 33");
  EXPECT_EQ(read.max_token, 34u);
  EXPECT_EQ(FenceOf("r"), 34u);
  absl::StatusOr<WriteResult> late = Write("r", 33, Put("k", "late 33"));
  EXPECT_THAT(late, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(late.status()).current_token, 34u);
  EXPECT_THAT(Read("r", "k", 33), StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(ValueOf("r", "k"), "from 33");
}

TEST_P(FencedStoreTest, PlainReadDoesNotTouchTheFence) {
  ASSERT_THAT(Write("r", 33, Put("k", "v")), IsOk());
  ASSERT_OK_AND_ASSIGN(ReadResult read, Read("r", "k"));
  EXPECT_EQ(read.max_token, 33u);
  EXPECT_THAT(Write("r", 33, Put("k", "w")), IsOk());
}

TEST_P(FencedStoreTest, FenceAloneShutsOutTheOlderToken) {
  ASSERT_THAT(Write("r", 33, Put("k", "from 33")), IsOk());

  ASSERT_OK_AND_ASSIGN(FenceResult fence, Fence("r", 34));

  EXPECT_EQ(fence.max_token, 34u);
  absl::StatusOr<WriteResult> late = Write("r", 33, Put("k", "late 33"));
  EXPECT_THAT(late, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(late.status()).reason, ErrorReason::kStaleToken);
  EXPECT_THAT(Fence("r", 33), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(Fence("r", 34), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "from 33");
}

TEST_P(FencedStoreTest, FenceOnANewResourceCreatesNoKeys) {
  ASSERT_THAT(Fence("fresh", 7), IsOk());
  ASSERT_OK_AND_ASSIGN(ResourceStats stats, store_->Describe("fresh"));
  EXPECT_EQ(stats.max_token, 7u);
  EXPECT_EQ(stats.key_count, 0u);
}

TEST_P(FencedStoreTest, VersionMismatchIsRejectedAndChangesNothing) {
  ASSERT_OK_AND_ASSIGN(WriteResult first, Write("r", 10, Put("k", "a")));

  // A newer token with a wrong expected version: not even the fence moves.
  absl::StatusOr<WriteResult> cas = Write("r", 11, Put("k", "b", first.version + 5));

  EXPECT_THAT(cas, StatusIs(absl::StatusCode::kAborted, HasSubstr("'k'")));
  ErrorInfo info = InfoOf(cas.status());
  EXPECT_EQ(info.reason, ErrorReason::kVersionMismatch);
  EXPECT_EQ(info.current_version, first.version);
  EXPECT_EQ(info.current_token, 10u);
  EXPECT_EQ(FenceOf("r"), 10u);
  ASSERT_OK_AND_ASSIGN(ReadResult read, Read("r", "k"));
  EXPECT_EQ(read.value, "a");
  EXPECT_EQ(read.version, first.version);
  // With the right version it goes through.
  ASSERT_OK_AND_ASSIGN(WriteResult second, Write("r", 11, Put("k", "b", first.version)));
  EXPECT_GT(second.version, first.version);
}

TEST_P(FencedStoreTest, ExpectedVersionZeroMeansTheKeyMustNotExist) {
  ASSERT_THAT(Write("r", 1, Put("k", "created", 0)), IsOk());
  absl::StatusOr<WriteResult> again = Write("r", 1, Put("k", "again", 0));
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(again.status()).current_version, 1u);
  EXPECT_EQ(ValueOf("r", "k"), "created");
}

TEST_P(FencedStoreTest, StaleTokenWinsOverVersionMismatch) {
  ASSERT_THAT(Write("r", 5, Put("k", "v")), IsOk());
  absl::StatusOr<WriteResult> both = Write("r", 4, Put("k", "w", 99));
  EXPECT_EQ(InfoOf(both.status()).reason, ErrorReason::kStaleToken);
}

TEST_P(FencedStoreTest, VersionsAreNeverReusedAcrossDeleteAndRecreate) {
  ASSERT_OK_AND_ASSIGN(WriteResult created, Write("r", 1, Put("k", "v1")));
  ASSERT_OK_AND_ASSIGN(WriteResult deleted, Write("r", 1, Del("k")));
  ASSERT_OK_AND_ASSIGN(ReadResult gone, Read("r", "k"));
  EXPECT_FALSE(gone.found);
  EXPECT_EQ(gone.version, 0u);

  ASSERT_OK_AND_ASSIGN(WriteResult recreated, Write("r", 1, Put("k", "v2")));
  Reopen();
  ASSERT_OK_AND_ASSIGN(WriteResult after_restart, Write("r", 1, Put("k", "v3")));

  EXPECT_EQ(created.version, 1u);
  EXPECT_EQ(deleted.version, 2u);
  EXPECT_EQ(recreated.version, 3u);
  EXPECT_EQ(after_restart.version, 4u);
  // A compare-and-set holding the first incarnation's version cannot match.
  EXPECT_THAT(Write("r", 1, Put("k", "x", created.version)),
              StatusIs(absl::StatusCode::kAborted));
}

TEST_P(FencedStoreTest, DeletingAnAbsentKeyIsAcceptedAndRaisesTheFence) {
  ASSERT_OK_AND_ASSIGN(WriteResult result, Write("r", 9, Del("never")));
  EXPECT_EQ(result.max_token, 9u);
  EXPECT_EQ(FenceOf("r"), 9u);
}

TEST_P(FencedStoreTest, MultiWriteAppliesEveryKeyAtOneVersion) {
  ASSERT_THAT(Write("r", 1, Put("c", "old")), IsOk());
  ASSERT_OK_AND_ASSIGN(WriteResult result,
                       MultiWrite("r", 2, {Put("a", "1"), Put("b", "2"), Del("c")}));
  EXPECT_EQ(result.version, 2u);
  EXPECT_EQ(ValueOf("r", "a"), "1");
  EXPECT_EQ(ValueOf("r", "b"), "2");
  EXPECT_EQ(ValueOf("r", "c"), "<absent>");
  ASSERT_OK_AND_ASSIGN(ReadResult b, Read("r", "b"));
  EXPECT_EQ(b.version, 2u);
}

TEST_P(FencedStoreTest, MultiWriteIsAllOrNothingOnOneVersionMismatch) {
  ASSERT_OK_AND_ASSIGN(WriteResult a, Write("r", 1, Put("a", "old a")));

  absl::StatusOr<WriteResult> result = MultiWrite(
      "r", 2, {Put("a", "new a", a.version), Put("b", "new b", 0), Put("c", "new c", 7)});

  EXPECT_THAT(result, StatusIs(absl::StatusCode::kAborted, HasSubstr("'c'")));
  EXPECT_EQ(InfoOf(result.status()).current_version, 0u);
  EXPECT_EQ(ValueOf("r", "a"), "old a");
  EXPECT_EQ(ValueOf("r", "b"), "<absent>");
  EXPECT_EQ(ValueOf("r", "c"), "<absent>");
  EXPECT_EQ(FenceOf("r"), 1u);
}

TEST_P(FencedStoreTest, MultiWriteIsAllOrNothingOnOneBadMutation) {
  absl::StatusOr<WriteResult> result =
      MultiWrite("r", 2, {Put("a", "1"), Unset("b"), Put("c", "3")});

  EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(result.status()).field, "mutations[1]");
  EXPECT_EQ(ValueOf("r", "a"), "<absent>");
  EXPECT_EQ(FenceOf("r"), 0u);
}

TEST_P(FencedStoreTest, ListPagesThroughKeysInOrder) {
  for (const char* key : {"e", "b", "g", "a", "d", "c", "f"}) {
    ASSERT_THAT(Write("r", 1, Put(key, std::string(3, key[0]))), IsOk());
  }
  ASSERT_THAT(Write("other", 1, Put("a", "not listed")), IsOk());

  std::vector<std::string> seen;
  std::vector<size_t> page_sizes;
  ListArgs args{"r", 3, ""};
  std::string token;
  for (int page = 0; page < 10; ++page) {
    ASSERT_OK_AND_ASSIGN(ListResult result, store_->List(args));
    page_sizes.push_back(result.keys.size());
    for (const KeyInfo& info : result.keys) {
      seen.push_back(info.key);
      EXPECT_EQ(info.size_bytes, 3u);
      EXPECT_GT(info.version, 0u);
    }
    if (result.next_page_token.empty()) break;
    token = result.next_page_token;
    args.page_token = token;
  }

  EXPECT_THAT(seen, ElementsAre("a", "b", "c", "d", "e", "f", "g"));
  EXPECT_THAT(page_sizes, ElementsAre(3, 3, 1));
}

// Names and values come back byte for byte whatever they hold: quotes,
// backslashes, braces and commas (PostgreSQL's array syntax), "NULL",
// spaces, non-ASCII text, and every byte value in a value. The resources
// share one batch, so a backend that locks them up front sees them all.
TEST_P(FencedStoreTest, NamesAndValuesComeBackByteForByte) {
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  const std::vector<std::string> names = {"quo\"te", "back\\slash", "{br,ace}",
                                          "NULL",     " spaced ",      "\xc3\xa9t\xc3\xa9"};
  HoldWriter();
  std::vector<ReplyPtr<WriteResult>> replies;
  for (const std::string& resource : names) {
    std::vector<M> puts;
    for (const std::string& key : names) puts.push_back(Put(key, key + all_bytes, 0));
    replies.push_back(StartWrite(resource, 5, puts, true));
  }
  ReleaseWriter();
  for (auto& reply : replies) EXPECT_THAT(reply->Wait(), IsOk());

  for (const std::string& resource : names) {
    SCOPED_TRACE(resource);
    EXPECT_EQ(FenceOf(resource), 5u);
    for (const std::string& key : names) EXPECT_EQ(ValueOf(resource, key), key + all_bytes);
    ASSERT_OK_AND_ASSIGN(ListResult listed, store_->List(ListArgs{resource, 0, ""}));
    std::vector<std::string> keys;
    for (const KeyInfo& info : listed.keys) keys.push_back(info.key);
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(keys, sorted);
  }
}

// Keys are listed in byte order, whatever the database's locale would say
// ("B" before "a", "~" before "é").
TEST_P(FencedStoreTest, ListOrdersKeysByTheirBytes) {
  for (const char* key : {"a", "~", "B", "\xc3\xa9", "aa", "Z"}) {
    ASSERT_THAT(Write("r", 1, Put(key, "v")), IsOk());
  }
  ASSERT_OK_AND_ASSIGN(ListResult listed, store_->List(ListArgs{"r", 0, ""}));
  std::vector<std::string> keys;
  for (const KeyInfo& info : listed.keys) keys.push_back(info.key);
  EXPECT_THAT(keys, ElementsAre("B", "Z", "a", "aa", "~", "\xc3\xa9"));
  // And a page starts after its token in that same order.
  ASSERT_OK_AND_ASSIGN(ListResult after, store_->List(ListArgs{"r", 0, "aa"}));
  ASSERT_EQ(after.keys.size(), 2u);
  EXPECT_EQ(after.keys[0].key, "~");
}

TEST_P(FencedStoreTest, ListWithPageSizeZeroUsesTheDefault) {
  std::vector<M> puts;
  for (int i = 0; i < 120; ++i) puts.push_back(Put("k" + std::to_string(1000 + i), "v"));
  ASSERT_THAT(MultiWrite("r", 1, puts), IsOk());
  ASSERT_OK_AND_ASSIGN(ListResult result, store_->List(ListArgs{"r", 0, ""}));
  EXPECT_EQ(result.keys.size(), limits_.default_page_size);
  EXPECT_FALSE(result.next_page_token.empty());
}

// Found by the gateway fuzz target: an empty string_view without storage
// (a default page token) was bound as SQL NULL, so List returned nothing.
// An empty view is empty text, and an empty value such a view puts too.
TEST_P(FencedStoreTest, EmptyViewsWithoutStorageAreEmptyNotNull) {
  ASSERT_THAT(Write("r", 1, Put("k", "v")), IsOk());
  ListArgs first;
  first.resource = "r";  // page_token: a default, empty string_view
  ASSERT_OK_AND_ASSIGN(ListResult listed, store_->List(first));
  ASSERT_EQ(listed.keys.size(), 1u);
  EXPECT_EQ(listed.keys[0].key, "k");

  WriteArgs put;
  put.resource = "r";
  put.token = 1;
  Mutation& m = put.mutations.emplace_back();
  m.key = "e";
  m.kind = Mutation::Kind::kPut;  // m.value: a default, empty string_view
  absl::Notification written;
  absl::StatusOr<WriteResult> result;
  store_->Write(std::move(put), [&](absl::StatusOr<WriteResult> r) {
    result = std::move(r);
    written.Notify();
  });
  written.WaitForNotification();
  ASSERT_THAT(result, IsOk());
  ASSERT_OK_AND_ASSIGN(ReadResult read, Read("r", "e"));
  EXPECT_TRUE(read.found);
  EXPECT_EQ(read.value, "");
  ASSERT_OK_AND_ASSIGN(ListResult again, store_->List(first));
  ASSERT_EQ(again.keys.size(), 2u);
  EXPECT_EQ(again.keys[0].key, "e");
  EXPECT_EQ(again.keys[0].size_bytes, 0u);
}

TEST_P(FencedStoreTest, DescribeReportsFenceKeysAndBytes) {
  ASSERT_THAT(MultiWrite("r", 12, {Put("a", "12345"), Put("b", "123")}), IsOk());
  ASSERT_OK_AND_ASSIGN(ResourceStats stats, store_->Describe("r"));
  EXPECT_EQ(stats.max_token, 12u);
  EXPECT_EQ(stats.key_count, 2u);
  EXPECT_EQ(stats.total_bytes, 8u);
  ASSERT_OK_AND_ASSIGN(ResourceStats unknown, store_->Describe("unknown"));
  EXPECT_EQ(unknown.max_token, 0u);
  EXPECT_EQ(unknown.key_count, 0u);
}

TEST_P(FencedStoreTest, FencesAndDataSurviveARestart) {
  ASSERT_THAT(Write("r", 40, Put("k", "kept")), IsOk());
  ASSERT_THAT(Fence("r", 41), IsOk());

  Reopen();

  EXPECT_EQ(FenceOf("r"), 41u);
  EXPECT_EQ(ValueOf("r", "k"), "kept");
  EXPECT_THAT(Write("r", 40, Put("k", "stale")), StatusIs(absl::StatusCode::kAborted));
}

// ------------------------------------------------------ shared tokens
// A shared lease's token reads, fenced, without raising the fence: it is
// accepted iff token >= the fence, and refused like a stale write once an
// exclusive holder with a larger token has touched the resource
// (docs/gateway.md, "Shared tokens").

TEST_P(FencedStoreTest, SharedReadsByTwoTokensBothPassWhileNoWriterCame) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());

  ASSERT_OK_AND_ASSIGN(ReadResult seven, Read("r", "k", 7, Shared()));
  ASSERT_OK_AND_ASSIGN(ReadResult eight, Read("r", "k", 8, Shared()));
  ASSERT_OK_AND_ASSIGN(ReadResult seven_again, Read("r", "k", 7, Shared()));

  for (const ReadResult& read : {seven, eight, seven_again}) {
    EXPECT_TRUE(read.found);
    EXPECT_EQ(read.value, "from 5");
    EXPECT_EQ(read.max_token, 5u);  // the fence as it was, not the token
  }
  // Shared reads moved nothing: the fence is 5, so 6 still writes, and the
  // revision is the write's.
  EXPECT_EQ(FenceOf("r"), 5u);
  ASSERT_OK_AND_ASSIGN(WriteResult six, Write("r", 6, Put("k", "from 6")));
  EXPECT_EQ(six.version, seven.version + 1);
  // A resource nobody wrote: fence 0, nothing found, still nothing made.
  ASSERT_OK_AND_ASSIGN(ReadResult fresh, Read("fresh", "k", 3, Shared()));
  EXPECT_FALSE(fresh.found);
  EXPECT_EQ(fresh.max_token, 0u);
  EXPECT_EQ(FenceOf("fresh"), 0u);
}

TEST_P(FencedStoreTest, AnExclusiveWriteWithALargerTokenShutsOutTheSmallerSharedToken) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  ASSERT_THAT(Read("r", "k", 7, Shared()), IsOk());
  ASSERT_THAT(Read("r", "k", 8, Shared()), IsOk());

  ASSERT_THAT(Write("r", 9, Put("k", "from 9")), IsOk());

  absl::StatusOr<ReadResult> stale = Read("r", "k", 8, Shared());
  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted, HasSubstr("stale token")));
  EXPECT_EQ(InfoOf(stale.status()).reason, ErrorReason::kStaleToken);
  EXPECT_EQ(InfoOf(stale.status()).current_token, 9u);
  EXPECT_THAT(Read("r", "k", 7, Shared()), StatusIs(absl::StatusCode::kAborted));
  // The refusals changed nothing; a shared token at or above the fence
  // still reads, and leaves the fence where it is.
  EXPECT_EQ(FenceOf("r"), 9u);
  ASSERT_OK_AND_ASSIGN(ReadResult ten, Read("r", "k", 10, Shared()));
  EXPECT_EQ(ten.value, "from 9");
  EXPECT_EQ(ten.max_token, 9u);
  EXPECT_EQ(FenceOf("r"), 9u);
}

// Kleppmann's timeline with a reader: it gets shared token 10 and reads,
// pauses past its TTL, its lease expires, a writer gets 12 and writes; the
// reader wakes and its fenced read with 10 is refused: it never sees data
// the newer writer changed. With grant-time fencing the expiry alone (its
// mark, 11) already shuts it out.
TEST_P(FencedStoreTest, APausedReaderIsRefusedOnceANewerWriterTouchedTheResource) {
  ASSERT_THAT(Write("r", 4, Put("k", "old")), IsOk());
  ASSERT_OK_AND_ASSIGN(ReadResult before, Read("r", "k", 10, Shared()));
  EXPECT_EQ(before.value, "old");
  // ... the reader pauses; its lease expires; the writer is granted 12.
  ASSERT_THAT(Write("r", 12, Put("k", "new")), IsOk());

  absl::StatusOr<ReadResult> late = Read("r", "k", 10, Shared());
  EXPECT_THAT(late, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(late.status()).current_token, 12u);

  ASSERT_THAT(Write("g", 4, Put("k", "old")), IsOk());
  ASSERT_THAT(Read("g", "k", 10, Shared()), IsOk());
  absl::Notification raised;
  store_->RaiseFence("g", 11, [&](absl::StatusOr<FenceResult> r) {  // the expiry mark
    EXPECT_THAT(r, IsOk());
    raised.Notify();
  });
  raised.WaitForNotification();
  EXPECT_THAT(Read("g", "k", 10, Shared()), StatusIs(absl::StatusCode::kAborted));
}

// Shared reads take the write pipeline's order: in one batch, a shared
// read after a newer exclusive write is refused, and one before it reads
// the old value.
TEST_P(FencedStoreTest, SharedReadsAreOrderedWithWritesInOneBatch) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  HoldWriter();
  ReplyPtr<ReadResult> first = StartRead("r", "k", 8, Shared());
  ReplyPtr<WriteResult> write = StartPut("r", 9, "k", "from 9");
  ReplyPtr<ReadResult> second = StartRead("r", "k", 8, Shared());
  ReleaseWriter();

  ASSERT_OK_AND_ASSIGN(ReadResult read, first->Wait());
  EXPECT_EQ(read.value, "from 5");
  EXPECT_THAT(write->Wait(), IsOk());
  EXPECT_THAT(second->Wait(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(FenceOf("r"), 9u);
}

TEST_P(FencedStoreTest, SharedTokensNeverWrite) {
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  EXPECT_THAT(Write("r", 7, Put("k", "from shared 7"), Shared()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a shared lease's token cannot write")));
  EXPECT_THAT(MultiWrite("r", 7, {Put("k", "x")}, Shared()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Fence("r", 7, Shared()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(FenceOf("r"), 5u);
  EXPECT_EQ(ValueOf("r", "k"), "from 5");
}

// With signing on, the signature binds the mode: a shared lease's token
// cannot pass for an exclusive one's (which would write, or raise the
// fence with a read), nor the reverse.
TEST_P(FencedStoreTest, TheSignatureBindsTheMode) {
  absl::StatusOr<KeyRing> keys =
      KeyRing::Parse("k1 " + std::string(64, 'a') + " sign", "keys");
  ASSERT_THAT(keys, IsOk());
  signer_ = std::make_unique<TokenSigner>(*std::move(keys));
  Reopen();
  auto sign = [&](uint64_t token, LeaseMode mode) {
    absl::StatusOr<TokenSignature> signature = signer_->Sign("r", token, mode);
    EXPECT_THAT(signature, IsOk());
    return signature.value_or(TokenSignature{});
  };
  const TokenSignature exclusive5 = sign(5, LeaseMode::kExclusive);
  const TokenSignature shared7 = sign(7, LeaseMode::kShared);
  ASSERT_THAT(Write("r", 5, Put("k", "from 5"), Claim{0, exclusive5}), IsOk());
  ASSERT_THAT(Read("r", "k", 7, Shared(shared7)), IsOk());

  // The shared signature presented as an exclusive token's.
  absl::StatusOr<WriteResult> write = Write("r", 7, Put("k", "x"), Claim{0, shared7});
  EXPECT_THAT(write, StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("mode")));
  EXPECT_EQ(InfoOf(write.status()).reason, ErrorReason::kBadSignature);
  EXPECT_THAT(Read("r", "k", 7, Claim{0, shared7}),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(Fence("r", 7, Claim{0, shared7}),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // The exclusive signature presented as a shared token's.
  EXPECT_THAT(Read("r", "k", 5, Shared(exclusive5)),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(FenceOf("r"), 5u);
  EXPECT_EQ(ValueOf("r", "k"), "from 5");
}

TEST_P(FencedStoreTest, ShutdownRefusesNewFencedRequests) {
  store_->Shutdown();
  EXPECT_THAT(Write("r", 1, Put("k", "v")), StatusIs(absl::StatusCode::kUnavailable,
                                                       HasSubstr("shutting down")));
  EXPECT_THAT(Fence("r", 1), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(FenceOf("r"), 0u);
}

}  // namespace
}  // namespace fencegate::gateway
