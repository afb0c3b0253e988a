// The gateway's Session stream without gRPC (gateway/session.h): a session
// on a fake transport (session_harness.h) over a real FencedStore on SQLite.
// Each answer must be what the unary call would have answered; a refused
// request fails alone; the bounds hold; the stream ends as documented. The
// writer thread is parked inside a held commit to keep requests in flight;
// nothing sleeps.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_store_fixture.h"
#include "tests/unit/session_harness.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class SessionTest : public GatewayStoreTest {
 protected:
  void SetUp() override {
    GatewayStoreTest::SetUp();
    protocol_errors_before_ = SessionHarness::ProtocolErrors();
  }
  void TearDown() override {
    GatewayStoreTest::TearDown();
    EXPECT_EQ(SessionHarness::ProtocolErrors(), protocol_errors_before_)
        << "a session broke the transport's rules (see the log)";
  }

  std::unique_ptr<SessionHarness> NewSession(size_t max_in_flight = 256) {
    StreamLimits limits;
    limits.max_in_flight = max_in_flight;
    return std::make_unique<SessionHarness>(store_.get(), limits);
  }

  // The status of the answer to `id`; DEADLINE_EXCEEDED if none came.
  static absl::Status AnswerStatus(SessionHarness& s, uint64_t id) {
    absl::StatusOr<v1::GatewayResult> answer = s.WaitForAnswer(id);
    if (!answer.ok()) return answer.status();
    return StatusOf(*answer);
  }

  int protocol_errors_before_ = 0;
};

TEST_F(SessionTest, EachRequestGetsTheAnswerItsUnaryCallWouldGet) {
  auto s = NewSession();
  v1::MultiWriteRequest multi;
  multi.set_resource("r");
  multi.set_token(5);
  for (const char* key : {"a", "b"}) {
    v1::Mutation* m = multi.add_mutations();
    m->set_key(key);
    m->set_value(absl::StrCat("value of ", key));
  }
  s->Send({Call(1, PutRequest("r", 5, "k", "v")), Call(2, multi), Call(3, FenceRequest("r", 6)),
           Call(4, ReadRequest("r", "k", 7))});
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult write, s->WaitForAnswer(1));
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult multi_write, s->WaitForAnswer(2));
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult fence, s->WaitForAnswer(3));
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult fenced_read, s->WaitForAnswer(4));

  ASSERT_EQ(write.result_case(), v1::GatewayResult::kWrite);
  EXPECT_EQ(write.write().version(), 1u);
  EXPECT_EQ(write.write().max_token(), 5u);
  ASSERT_EQ(multi_write.result_case(), v1::GatewayResult::kMultiWrite);
  EXPECT_THAT(multi_write.multi_write().versions(), ::testing::ElementsAre(2u, 2u));
  ASSERT_EQ(fence.result_case(), v1::GatewayResult::kFence);
  EXPECT_EQ(fence.fence().max_token(), 6u);
  ASSERT_EQ(fenced_read.result_case(), v1::GatewayResult::kRead);
  EXPECT_TRUE(fenced_read.read().found());
  EXPECT_EQ(fenced_read.read().value(), "v");
  EXPECT_EQ(fenced_read.read().max_token(), 7u);
  EXPECT_EQ(FenceOf("r"), 7u);
  EXPECT_EQ(ValueOf("r", "b"), "value of b");

  // A plain read, on a later message of the same stream.
  ASSERT_TRUE(s->ReadPending());
  s->Send({Call(5, ReadRequest("r", "a"))});
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult plain, s->WaitForAnswer(5));
  EXPECT_EQ(plain.read().value(), "value of a");
  EXPECT_EQ(plain.read().max_token(), 7u);
}

TEST_F(SessionTest, ARefusedRequestFailsAloneAndTheStreamStaysOpen) {
  ASSERT_THAT(Write("r", 34, Put("k", "from 34")), IsOk());
  auto s = NewSession();
  v1::WriteRequest no_key = PutRequest("r", 35, "", "v");
  s->Send({Call(1, PutRequest("r", 33, "k", "from 33")), Call(2, no_key),
           Call(3, PutRequest("r", 35, "k2", "from 35"))});

  absl::Status stale = AnswerStatus(*s, 1);
  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted, HasSubstr("acquire the lock again")));
  EXPECT_EQ(InfoOf(stale).reason, ErrorReason::kStaleToken);
  EXPECT_EQ(InfoOf(stale).current_token, 34u);
  absl::Status invalid = AnswerStatus(*s, 2);
  EXPECT_THAT(invalid, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(invalid).field, "mutation.key");
  EXPECT_THAT(AnswerStatus(*s, 3), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "from 34");
  EXPECT_EQ(ValueOf("r", "k2"), "from 35");

  EXPECT_FALSE(s->finished());
  ASSERT_TRUE(s->ReadPending());
  s->Send({Call(4, PutRequest("r", 35, "k", "again"))});
  EXPECT_THAT(AnswerStatus(*s, 4), IsOk());
}

TEST_F(SessionTest, ACallThatDoesNotParseIsRefusedAloneWithItsRequestId) {
  auto s = NewSession();
  // A GatewaySessionRequest by hand: call 7 holds a write whose bytes are
  // not a WriteRequest; call 8 is fine.
  std::string broken_call;
  broken_call += '\x08';  // request_id = 7
  broken_call += '\x07';
  broken_call += '\x12';  // write, 3 bytes that do not parse
  broken_call += '\x03';
  broken_call += "\xff\xff\xff";
  const std::string good_call = Call(8, PutRequest("r", 1, "k", "v")).SerializeAsString();
  std::string message;
  for (const std::string& call : {broken_call, good_call}) {
    message += '\x0a';
    message += static_cast<char>(call.size());
    message += call;
  }
  s->Send(message);

  EXPECT_THAT(AnswerStatus(*s, 7), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("request 7 of this stream: its write is not a "
                                                      "valid fencegate.v1.WriteRequest")));
  EXPECT_THAT(AnswerStatus(*s, 8), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "v");
  EXPECT_FALSE(s->finished());
}

TEST_F(SessionTest, UnknownFieldsAreRefusedLikeTheUnaryCall) {
  auto s = NewSession();
  v1::GatewayCall with_unknown = Call(1, PutRequest("r", 1, "k", "v"));
  with_unknown.mutable_write()->GetReflection()->MutableUnknownFields(
      with_unknown.mutable_write())->AddVarint(42, 1);
  v1::GatewayCall empty;  // no request at all
  empty.set_request_id(2);
  s->Send({with_unknown, empty});

  absl::Status unknown = AnswerStatus(*s, 1);
  EXPECT_THAT(unknown, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(unknown).field, "WriteRequest.42");
  absl::Status none = AnswerStatus(*s, 2);
  EXPECT_THAT(none, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(none).field, "request");
  EXPECT_EQ(FenceOf("r"), 0u);
}

TEST_F(SessionTest, AMessageWhoseFramingDoesNotParseEndsTheStreamAfterAnsweringWhatCameBefore) {
  auto s = NewSession();
  HoldWriter();
  s->Send({Call(1, PutRequest("r", 1, "before", "v"))});
  ASSERT_TRUE(s->ReadPending());
  s->Send(std::string("\x0a\x7f\x08\x01", 4));  // a call of 127 bytes, with 2
  EXPECT_FALSE(s->ReadPending());               // no more reading
  EXPECT_FALSE(s->finished());                  // request 1 is still in flight
  ReleaseWriter();

  EXPECT_THAT(AnswerStatus(*s, 1), IsOk());
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr("not a valid fencegate.v1.GatewaySessionRequest")));
  EXPECT_EQ(ValueOf("r", "before"), "v");
}

TEST_F(SessionTest, ARequestIdInFlightCannotBeReusedAndTheFirstRequestStands) {
  auto s = NewSession();
  HoldWriter();
  s->Send({Call(9, PutRequest("r", 1, "k", "first"))});
  s->Send({Call(9, PutRequest("r", 1, "k", "second"))});
  // The refusal comes at once, while the first is still in flight.
  ASSERT_OK_AND_ASSIGN(v1::GatewayResult refused, s->WaitForAnswer(9));
  absl::Status status = StatusOf(refused);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("was not applied")));
  EXPECT_EQ(InfoOf(status).field, "request_id");
  ReleaseWriter();

  s->HalfClose();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, IsOk());
  std::vector<v1::GatewayResult> answers = s->AnswersTo(9);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].result_case(), v1::GatewayResult::kWrite);
  EXPECT_EQ(ValueOf("r", "k"), "first");
  // Once answered, the id is free again.
  auto again = NewSession();
  again->Send({Call(9, PutRequest("r", 1, "k", "third"))});
  EXPECT_THAT(AnswerStatus(*again, 9), IsOk());
}

TEST_F(SessionTest, PastTheInFlightLimitARequestIsRefusedAndChangesNothing) {
  auto s = NewSession(/*max_in_flight=*/3);
  HoldWriter();
  s->Send({Call(1, PutRequest("r", 1, "a", "v")), Call(2, PutRequest("r", 1, "b", "v")),
           Call(3, PutRequest("r", 1, "c", "v"))});
  s->Send({Call(4, PutRequest("r", 1, "d", "v"))});
  absl::Status refused = AnswerStatus(*s, 4);
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kResourceExhausted,
                                HasSubstr("--max_stream_in_flight")));
  ReleaseWriter();
  for (uint64_t id : {1, 2, 3}) EXPECT_THAT(AnswerStatus(*s, id), IsOk());
  EXPECT_EQ(ValueOf("r", "d"), "<absent>");
  // Room again.
  s->Send({Call(5, PutRequest("r", 1, "d", "v"))});
  EXPECT_THAT(AnswerStatus(*s, 5), IsOk());
}

TEST_F(SessionTest, AMessageWithMoreRequestsThanTheLimitEndsTheStreamAndAppliesNone) {
  auto s = NewSession(/*max_in_flight=*/2);
  s->Send({Call(1, PutRequest("r", 1, "a", "v")), Call(2, PutRequest("r", 1, "b", "v")),
           Call(3, PutRequest("r", 1, "c", "v"))});
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("at most 2")));
  EXPECT_TRUE(s->answers().empty());
  EXPECT_EQ(FenceOf("r"), 0u);
}

TEST_F(SessionTest, AClientThatNeverReadsIsNoLongerReadFrom) {
  constexpr uint64_t kLimit = 4;
  auto s = NewSession(kLimit);
  s->TakeWrites(false);  // answers pile up unread
  auto message = [](uint64_t first) {
    std::vector<v1::GatewayCall> calls;
    for (uint64_t id = first; id < first + kLimit; ++id) {
      calls.push_back(Call(id, PutRequest("r", 1, absl::StrCat("k", id), "v")));
    }
    return calls;
  };
  s->Send(message(1));
  ASSERT_TRUE(s->WaitForWritesStarted(1));  // kLimit answers decided, none taken
  ASSERT_TRUE(s->ReadPending());             // asked for before they were decided
  s->Send(message(1 + kLimit));
  // kLimit answers are unsent: no more reading, so gRPC's flow control
  // holds the client back and nothing more piles up here.
  EXPECT_FALSE(s->ReadPending());
  EXPECT_EQ(s->reads_started(), 2);

  s->TakeWrites(true);
  for (uint64_t id = 1; id <= 2 * kLimit; ++id) EXPECT_THAT(AnswerStatus(*s, id), IsOk());
  EXPECT_TRUE(s->ReadPending());  // taken: reading again
}

TEST_F(SessionTest, FencedRequestsOfOneStreamTakeEffectInTheOrderSent) {
  auto s = NewSession();
  std::vector<v1::GatewayCall> calls;
  for (uint64_t i = 1; i <= 20; ++i) {
    calls.push_back(Call(i, PutRequest("r", 1, "k", absl::StrCat(i))));
    if (i % 5 == 0) {  // several messages, several calls each
      s->Send(calls);
      calls.clear();
    }
  }
  uint64_t last_version = 0;
  for (uint64_t i = 1; i <= 20; ++i) {
    ASSERT_OK_AND_ASSIGN(v1::GatewayResult answer, s->WaitForAnswer(i));
    ASSERT_EQ(answer.result_case(), v1::GatewayResult::kWrite) << StatusOf(answer);
    EXPECT_GT(answer.write().version(), last_version) << "request " << i;
    last_version = answer.write().version();
  }
  EXPECT_EQ(ValueOf("r", "k"), "20");
}

// Many messages while the writer delivers answers on its own thread: the
// session must not ask for the next message before the last one is handled
// (the harness counts any read asked for meanwhile), so messages are
// handled one at a time, in order, and every request is answered once.
TEST_F(SessionTest, MessagesAreHandledOneAtATimeWhileAnswersArriveConcurrently) {
  auto s = NewSession();
  constexpr uint64_t kMessages = 300;
  constexpr uint64_t kPerMessage = 4;
  uint64_t id = 0;
  for (uint64_t m = 0; m < kMessages; ++m) {
    std::vector<v1::GatewayCall> calls;
    for (uint64_t i = 0; i < kPerMessage; ++i) {
      ++id;
      calls.push_back(Call(id, PutRequest(absl::StrCat("r", id % 3), 1, "k", absl::StrCat(id))));
    }
    // A reading client: answers are taken while the next message goes in.
    ASSERT_TRUE(s->ReadPending()) << "message " << m;
    s->Send(calls);
    if (m % 16 == 0) {
      ASSERT_THAT(s->WaitForAnswer(id), IsOk());
    }
  }
  s->HalfClose();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, IsOk());
  std::vector<v1::GatewayResult> answers = s->answers();
  EXPECT_EQ(answers.size(), kMessages * kPerMessage);
  for (uint64_t i = 1; i <= id; ++i) EXPECT_EQ(s->AnswersTo(i).size(), 1u) << i;
  // In send order: each resource holds its last write.
  for (uint64_t last = id; last > id - 3; --last) {
    EXPECT_EQ(ValueOf(absl::StrCat("r", last % 3), "k"), absl::StrCat(last));
  }
}

// Forwards to another backend, and runs `on_read` inside every plain read:
// a way to act while a session is in the middle of handling a message.
class ReadHook final : public StorageBackend {
 public:
  ReadHook(StorageBackend* inner, absl::AnyInvocable<void()> on_read)
      : inner_(inner), on_read_(std::move(on_read)) {}
  absl::Status BeginBatch(absl::Span<const absl::string_view> r) override {
    return inner_->BeginBatch(r);
  }
  absl::Status Apply(const FencedOp& op, OpResult* result) override {
    return inner_->Apply(op, result);
  }
  absl::Status CommitBatch() override { return inner_->CommitBatch(); }
  void AbortBatch() override { inner_->AbortBatch(); }
  absl::StatusOr<ReadResult> ReadCommitted(absl::string_view resource,
                                           absl::string_view key) override {
    on_read_();
    return inner_->ReadCommitted(resource, key);
  }
  absl::StatusOr<ListPage> ListCommitted(absl::string_view resource, absl::string_view after,
                                         size_t limit) override {
    return inner_->ListCommitted(resource, after, limit);
  }
  absl::StatusOr<ResourceStats> DescribeCommitted(absl::string_view resource) override {
    return inner_->DescribeCommitted(resource);
  }

 private:
  StorageBackend* const inner_;
  absl::AnyInvocable<void()> on_read_;
};

// The interleaving of the test above, forced: message 1's batch commits on
// the thread that handled it (run to completion), after that thread asked
// for the next message; the commit is held there until message 2, handled
// on this thread meanwhile, is inside its plain read. Then request 1's
// answer goes out from the first thread while message 2 is being handled.
// The session must not ask for the next message from there (a second read
// in flight would let two messages be handled at once, out of order, and
// gRPC allows one).
TEST_F(SessionTest, AnAnswerSentWhileAMessageIsHandledDoesNotStartTheNextRead) {
  absl::Notification entered, proceed;
  SessionHarness* harness = nullptr;
  ReadHook hook(faulty_.get(), [&] {
    if (proceed.HasBeenNotified()) return;
    proceed.Notify();  // the held batch commits and answers request 1
    EXPECT_TRUE(harness->WaitForWritesStarted(1));
  });
  FencedStore store(&hook, limits_);
  SessionHarness s(&store);
  harness = &s;
  faulty_->HoldNextCommit(&entered, &proceed);
  std::thread first([&] { s.Send({Call(1, PutRequest("r", 1, "k", "v"))}); });
  entered.WaitForNotification();  // message 1 handled, its commit held
  s.Send({Call(2, ReadRequest("r", "k"))});
  first.join();
  EXPECT_THAT(AnswerStatus(s, 1), IsOk());
  EXPECT_THAT(AnswerStatus(s, 2), IsOk());
  EXPECT_EQ(s.reads_started(), 3);  // one per message, each after the last
}

TEST_F(SessionTest, AnswersDecidedTogetherGoOutInOneMessage) {
  auto s = NewSession();
  HoldWriter();
  std::vector<v1::GatewayCall> calls;
  for (uint64_t i = 1; i <= 16; ++i) {
    calls.push_back(Call(i, PutRequest(absl::StrCat("r", i), 1, "k", "v")));
  }
  s->Send(calls);
  ReleaseWriter();  // all 16 commit in one batch
  for (uint64_t i = 1; i <= 16; ++i) EXPECT_THAT(AnswerStatus(*s, i), IsOk());
  EXPECT_EQ(s->messages_taken(), 1);
}

TEST_F(SessionTest, HalfCloseWithRequestsInFlightAnswersThemAllThenEndsOk) {
  auto s = NewSession();
  HoldWriter();
  s->Send({Call(1, PutRequest("r", 1, "a", "v")), Call(2, FenceRequest("r", 2))});
  s->HalfClose();
  EXPECT_FALSE(s->finished());
  ReleaseWriter();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, IsOk());
  EXPECT_THAT(AnswerStatus(*s, 1), IsOk());
  EXPECT_THAT(AnswerStatus(*s, 2), IsOk());
}

TEST_F(SessionTest, ACancelledStreamEndsAtOnceAndItsRequestsApplyOnceOrNotAtAll) {
  auto s = NewSession();
  HoldWriter();
  s->Send({Call(1, PutRequest("r", 1, "a", "v")), Call(2, PutRequest("r", 1, "b", "v"))});
  s->Cancel();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kCancelled));
  ReleaseWriter();
  // Already handed to the store: both commit, once (one revision each).
  ASSERT_THAT(Fence("later", 1), IsOk());  // its batch commits after theirs
  ASSERT_OK_AND_ASSIGN(ReadResult b, Read("r", "b"));
  ASSERT_OK_AND_ASSIGN(ReadResult a, Read("r", "a"));
  EXPECT_TRUE(a.found && b.found);
  EXPECT_EQ(b.version, a.version + 1);
  EXPECT_TRUE(s->answers().empty());
}

TEST_F(SessionTest, CloseAnswersWhatWasReadThenEndsWithItsStatus) {
  auto s = NewSession();
  HoldWriter();
  s->Send({Call(1, PutRequest("r", 1, "a", "v"))});
  ASSERT_TRUE(s->ReadPending());
  s->session().Close(absl::UnavailableError("shutting down"));
  // A message that arrives on the read in progress is neither applied nor
  // answered.
  s->Send({Call(2, PutRequest("r", 1, "late", "v"))});
  ReleaseWriter();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(AnswerStatus(*s, 1), IsOk());
  EXPECT_TRUE(s->AnswersTo(2).empty());
  EXPECT_EQ(ValueOf("r", "late"), "<absent>");
}

}  // namespace
}  // namespace fencegate::gateway
