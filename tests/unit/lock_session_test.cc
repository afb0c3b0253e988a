// The lock service's Session stream without gRPC
// (lockservice/core/lock_session.h): a session on a fake transport
// (lock_session_harness.h) over a real LockManager on SQLite and a FakeClock.
// Each answer must be what the unary call would have answered; a refused call
// fails alone; a parked Acquire holds up nothing; lease losses are pushed at
// their instant, after their commit, and only where the docs say; the bounds
// hold; the stream ends as documented and leaves its leases alone. Nothing
// sleeps: time is the fake clock's, and "nothing was pushed" is checked after
// the manager delivered everything decided (Settle).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/base/errors.h"
#include "common/signing/signing_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_session_fixture.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ::absl::Milliseconds;
using ::absl::Seconds;
using ::fencegate::testing::AcquireCall;
using ::fencegate::testing::DescribeCall;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::ReleaseCall;
using ::fencegate::testing::RenewCall;
using ::fencegate::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ------------------------------------------------------------------ calls

TEST_F(LockSessionTest, EachCallGetsTheAnswerItsUnaryCallWouldGet) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10)),
           AcquireCall(2, "r", "alice", Seconds(20)), DescribeCall(3, "r")});
  ASSERT_OK_AND_ASSIGN(v1::LockResult first, s->WaitForAnswer(1));
  ASSERT_OK_AND_ASSIGN(v1::LockResult again, s->WaitForAnswer(2));
  ASSERT_OK_AND_ASSIGN(v1::LockResult described, s->WaitForAnswer(3));
  ASSERT_EQ(first.result_case(), v1::LockResult::kAcquire);
  EXPECT_TRUE(first.acquire().acquired());
  EXPECT_EQ(first.acquire().ttl_ms(), 10000);
  EXPECT_EQ(first.acquire().hold_count(), 1u);
  EXPECT_EQ(again.acquire().token(), first.acquire().token());  // reentrant
  EXPECT_EQ(again.acquire().hold_count(), 2u);
  ASSERT_EQ(described.result_case(), v1::LockResult::kDescribe);
  EXPECT_TRUE(described.describe().held());
  EXPECT_EQ(described.describe().holder(), "alice");
  EXPECT_EQ(described.describe().hold_count(), 2u);

  const uint64_t token = first.acquire().token();
  s->Send({RenewCall(4, "r", token, Seconds(5)), ReleaseCall(5, "r", token),
           AcquireCall(6, "r", "bob", Seconds(10))});
  ASSERT_OK_AND_ASSIGN(v1::LockResult renewed, s->WaitForAnswer(4));
  ASSERT_OK_AND_ASSIGN(v1::LockResult released, s->WaitForAnswer(5));
  ASSERT_OK_AND_ASSIGN(v1::LockResult refused, s->WaitForAnswer(6));
  EXPECT_EQ(renewed.renew().ttl_ms(), 5000);  // "extend to": now + 5 s
  EXPECT_EQ(released.release().hold_count(), 1u);
  ASSERT_EQ(refused.result_case(), v1::LockResult::kAcquire);
  EXPECT_FALSE(refused.acquire().acquired());  // not granted: an answer, not an error
  EXPECT_EQ(refused.acquire().reason(), v1::AcquireResponse::HELD);
  EXPECT_EQ(refused.acquire().holder_token(), token);
}

TEST_F(LockSessionTest, ARefusedCallFailsAloneAndTheStreamStaysOpen) {
  auto s = NewSession();
  const uint64_t bobs = AcquireElsewhere("r", "bob");
  v1::LockCall no_mode = AcquireCall(6, "t", "alice", Seconds(10));
  no_mode.mutable_acquire()->set_mode(static_cast<v1::LeaseMode>(9));  // a newer client's
  s->Send({AcquireCall(1, "r", "alice", Milliseconds(1)),              // below --min_ttl
           RenewCall(2, "r", bobs + 100, Seconds(5)),  // not the holder's token
           ReleaseCall(3, "r", 0),                     // token 0
           AcquireCall(4, "s", "alice", Seconds(10)), no_mode});
  absl::Status ttl = s->AnswerStatus(1);
  EXPECT_THAT(ttl, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(ttl).field, "ttl_ms");
  absl::Status lost = s->AnswerStatus(2);
  EXPECT_THAT(lost, StatusIs(absl::StatusCode::kAborted, HasSubstr("lease lost")));
  EXPECT_EQ(InfoOf(lost).reason, ErrorReason::kLeaseLost);
  EXPECT_EQ(InfoOf(lost).current_token, bobs);
  EXPECT_EQ(InfoOf(s->AnswerStatus(3)).field, "token");
  EXPECT_THAT(s->AnswerStatus(4), IsOk());
  absl::Status mode = s->AnswerStatus(6);
  EXPECT_THAT(mode, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode is 9")));
  EXPECT_EQ(InfoOf(mode).field, "mode");
  EXPECT_FALSE(Describe("t").held);
  EXPECT_FALSE(s->finished());
  ASSERT_TRUE(s->ReadPending());
  s->Send({DescribeCall(5, "r")});
  EXPECT_THAT(s->AnswerStatus(5), IsOk());
}

TEST_F(LockSessionTest, SharedLeasesAndPermitsAreAskedForAndDescribedOnTheStream) {
  auto s = NewSession();
  const auto with = [](v1::LockCall call, v1::LeaseMode mode, uint32_t permits) {
    call.mutable_acquire()->set_mode(mode);
    call.mutable_acquire()->set_permits(permits);
    return call;
  };
  s->Send({with(AcquireCall(1, "r", "alice", Seconds(10)), v1::LEASE_MODE_SHARED, 0),
           with(AcquireCall(2, "r", "bob", Seconds(10)), v1::LEASE_MODE_SHARED, 0),
           with(AcquireCall(3, "p", "alice", Seconds(10)), v1::LEASE_MODE_PERMIT, 2),
           with(AcquireCall(4, "p", "carol", Seconds(10)), v1::LEASE_MODE_PERMIT, 3)});
  const uint64_t alices = Granted(*s, 1);
  const uint64_t bobs = Granted(*s, 2);
  EXPECT_NE(alices, bobs);
  EXPECT_NE(Granted(*s, 3), 0u);
  absl::Status other_size = s->AnswerStatus(4);
  EXPECT_THAT(other_size, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(other_size).field, "permits");
  s->Send({DescribeCall(5, "r"), DescribeCall(6, "p")});
  ASSERT_OK_AND_ASSIGN(v1::LockResult shared, s->WaitForAnswer(5));
  EXPECT_EQ(shared.describe().mode(), v1::LEASE_MODE_SHARED);
  EXPECT_EQ(shared.describe().holders(), 2u);
  EXPECT_EQ(shared.describe().token(), std::min(alices, bobs));  // the oldest
  ASSERT_OK_AND_ASSIGN(v1::LockResult semaphore, s->WaitForAnswer(6));
  EXPECT_EQ(semaphore.describe().mode(), v1::LEASE_MODE_PERMIT);
  EXPECT_EQ(semaphore.describe().permits(), 2u);
  EXPECT_EQ(semaphore.describe().holders(), 1u);
}

TEST_F(LockSessionTest, ACallThatDoesNotParseOrHasNoRequestIsRefusedAlone) {
  auto s = NewSession();
  // Call 7 holds an acquire whose bytes are not an AcquireRequest; call 8
  // carries no request; call 9 is fine.
  std::string broken("\x08\x07\x12\x03\xff\xff\xff", 7);
  v1::LockCall empty;
  empty.set_request_id(8);
  std::string message;
  for (const std::string& call :
       {broken, empty.SerializeAsString(),
        AcquireCall(9, "r", "alice", Seconds(10)).SerializeAsString()}) {
    message += '\x0a';
    message += static_cast<char>(call.size());
    message += call;
  }
  s->Send(message);
  EXPECT_THAT(s->AnswerStatus(7),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("request 7 of this stream: its acquire is not a valid "
                                 "fencegate.v1.AcquireRequest")));
  absl::Status none = s->AnswerStatus(8);
  EXPECT_EQ(InfoOf(none).field, "request");
  EXPECT_THAT(none, StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("set one of acquire, renew, release, describe, "
                                       "campaign, proclaim, leader or resign")));
  EXPECT_THAT(s->AnswerStatus(9), IsOk());
}

TEST_F(LockSessionTest, AParkedAcquireHoldsUpNoOtherCallOfTheStream) {
  auto s = NewSession();
  const uint64_t bobs = AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "r", "alice", Seconds(10), /*wait=*/Seconds(30))});
  s->Send({AcquireCall(2, "other", "alice", Seconds(10)), DescribeCall(3, "r")});
  EXPECT_THAT(s->AnswerStatus(2), IsOk());
  ASSERT_OK_AND_ASSIGN(v1::LockResult described, s->WaitForAnswer(3));
  EXPECT_EQ(described.describe().waiters(), 1u);
  EXPECT_TRUE(s->AnswersTo(1).empty());  // still parked
  ASSERT_THAT(ReleaseElsewhere("r", bobs), IsOk());
  EXPECT_GT(Granted(*s, 1), bobs);
}

TEST_F(LockSessionTest, AParkedAcquireWhoseWaitRunsOutIsAnsweredNotAcquired) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "r", "alice", Seconds(10), /*wait=*/Seconds(2))});
  Settle(*s);
  EXPECT_TRUE(s->AnswersTo(1).empty());
  clock_.AdvanceBy(Seconds(2));
  ASSERT_OK_AND_ASSIGN(v1::LockResult answer, s->WaitForAnswer(1));
  EXPECT_FALSE(answer.acquire().acquired());
}

// ----------------------------------------------------------------- pushes

TEST_F(LockSessionTest, AnExpiryIsPushedAtItsExactInstantAndNotBefore) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  clock_.AdvanceBy(Seconds(10) - Milliseconds(1));
  Settle(*s);
  EXPECT_THAT(s->lost(), IsEmpty());
  clock_.AdvanceBy(Milliseconds(1));
  ASSERT_OK_AND_ASSIGN(v1::LeaseLost lost, s->WaitForLost(token));
  EXPECT_EQ(lost.resource(), "r");
  EXPECT_EQ(lost.reason(), v1::LeaseLost::EXPIRED);
  EXPECT_FALSE(s->finished());  // a push ends nothing
}

TEST_F(LockSessionTest, ARenewalOnTheStreamMovesThePush) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  clock_.AdvanceBy(Seconds(9));
  s->Send({RenewCall(2, "r", token, Seconds(10))});  // now ends at 19 s
  ASSERT_THAT(s->AnswerStatus(2), IsOk());
  clock_.AdvanceBy(Seconds(10) - Milliseconds(1));
  Settle(*s);
  EXPECT_THAT(s->lost(), IsEmpty());
  clock_.AdvanceBy(Milliseconds(1));
  ASSERT_OK_AND_ASSIGN(v1::LeaseLost lost, s->WaitForLost(token));
  EXPECT_EQ(lost.reason(), v1::LeaseLost::EXPIRED);
}

TEST_F(LockSessionTest, AReleaseOnTheStreamIsAnsweredNotPushed) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  s->Send({ReleaseCall(2, "r", token)});
  ASSERT_OK_AND_ASSIGN(v1::LockResult released, s->WaitForAnswer(2));
  EXPECT_EQ(released.release().hold_count(), 0u);
  clock_.AdvanceBy(Seconds(60));
  Settle(*s);
  EXPECT_THAT(s->lost(), IsEmpty());
}

TEST_F(LockSessionTest, AReleaseFromElsewhereIsPushedAndTheTakeoverIsNot) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  ASSERT_THAT(ReleaseElsewhere("r", token), IsOk());  // a unary Release, a stale path
  ASSERT_OK_AND_ASSIGN(v1::LeaseLost lost, s->WaitForLost(token));
  EXPECT_EQ(lost.reason(), v1::LeaseLost::RELEASED);
  const uint64_t bobs = AcquireElsewhere("r", "bob");  // takes it over
  clock_.AdvanceBy(Seconds(60));                       // and lets it expire
  Settle(*s);
  EXPECT_EQ(s->lost().size(), 1u);  // bob's lease was never this stream's
  EXPECT_GT(bobs, token);
}

TEST_F(LockSessionTest, TwoStreamsThatAcquiredAndRenewedOneLeaseBothHearItsEnd) {
  auto first = NewSession();
  auto second = NewSession();
  first->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*first, 1);
  second->Send({RenewCall(1, "r", token, Seconds(3))});  // a client that reconnected
  ASSERT_THAT(second->AnswerStatus(1), IsOk());
  clock_.AdvanceBy(Seconds(3));
  EXPECT_THAT(first->WaitForLost(token), IsOk());
  EXPECT_THAT(second->WaitForLost(token), IsOk());
  // A release on one of them is pushed to the other only.
  first->Send({AcquireCall(2, "s", "alice", Seconds(10))});
  const uint64_t s_token = Granted(*first, 2);
  second->Send({RenewCall(2, "s", s_token, Seconds(10)), ReleaseCall(3, "s", s_token)});
  ASSERT_THAT(second->AnswerStatus(3), IsOk());
  ASSERT_OK_AND_ASSIGN(v1::LeaseLost lost, first->WaitForLost(s_token));
  EXPECT_EQ(lost.reason(), v1::LeaseLost::RELEASED);
  Settle(*second);
  EXPECT_EQ(second->lost().size(), 1u);
}

TEST_F(LockSessionTest, TheLossIsPushedAfterTheAnswerThatGrantedTheLease) {
  auto s = NewSession();
  // The grant and its expiry decided while one commit is held: one batch
  // delivers both; the answer comes first, and a message never carries an
  // answer decided after a push in it.
  absl::Notification at_store, proceed;
  faulty_->HoldNextCommit(&at_store, &proceed);
  manager_->Acquire(manager_->NewCallId(),
                    AcquireArgs{"filler", "carol", Seconds(10), absl::ZeroDuration(), ""},
                    [](absl::StatusOr<AcquireResult>) {});
  at_store.WaitForNotification();
  s->Send({AcquireCall(1, "r", "alice", Milliseconds(100))});
  clock_.AdvanceBy(Milliseconds(100));
  s->Send({DescribeCall(2, "r")});  // decided after the expiry
  proceed.Notify();
  const uint64_t token = Granted(*s, 1);
  ASSERT_THAT(s->WaitForLost(token), IsOk());
  ASSERT_THAT(s->WaitForAnswer(2), IsOk());
  EXPECT_THAT(s->sequence(),
              ElementsAre("answer 1", "lost " + std::to_string(token), "|", "answer 2"));
}

// ----------------------------------------------------- bounds and the end

TEST_F(LockSessionTest, ARequestIdInFlightCannotBeReusedAndTheFirstCallStands) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(9, "r", "alice", Seconds(10), Seconds(30))});  // parked
  s->Send({DescribeCall(9, "r")});
  absl::Status refused = s->AnswerStatus(9);
  EXPECT_THAT(refused,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request_id 9")));
  EXPECT_EQ(InfoOf(refused).field, "request_id");
  EXPECT_EQ(Describe("r").waiters, 1u);  // the first one is still parked
}

TEST_F(LockSessionTest, PastTheInFlightLimitACallIsRefusedAndChangesNothing) {
  auto s = NewSession(/*max_in_flight=*/2);
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "r", "alice", Seconds(10), Seconds(30)),
           AcquireCall(2, "r", "carol", Seconds(10), Seconds(30))});
  s->Send({AcquireCall(3, "free", "dave", Seconds(10))});
  EXPECT_THAT(s->AnswerStatus(3), StatusIs(absl::StatusCode::kResourceExhausted,
                                           HasSubstr("--max_stream_in_flight")));
  EXPECT_FALSE(Describe("free").held);
}

TEST_F(LockSessionTest, AMessageWithMoreCallsThanTheLimitEndsTheStreamAndAppliesNone) {
  auto s = NewSession(/*max_in_flight=*/2);
  s->Send({AcquireCall(1, "a", "alice", Seconds(10)),
           AcquireCall(2, "b", "alice", Seconds(10)),
           AcquireCall(3, "c", "alice", Seconds(10))});
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end,
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("at most 2")));
  EXPECT_FALSE(Describe("a").held);
}

TEST_F(LockSessionTest,
       AMessageWhoseFramingDoesNotParseEndsTheStreamAfterTheCallsBefore) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "r", "alice", Seconds(10), Seconds(30))});  // parked
  s->Send(std::string("\x0a\x7f\x08\x01", 4));  // a call of 127 bytes, with 2
  EXPECT_FALSE(s->ReadPending());
  EXPECT_FALSE(s->finished());  // call 1 still waits for its answer
  clock_.AdvanceBy(Seconds(30));
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr("not a valid fencegate.v1.LockSessionRequest")));
  ASSERT_OK_AND_ASSIGN(v1::LockResult answer, s->WaitForAnswer(1));
  EXPECT_FALSE(answer.acquire().acquired());
}

TEST_F(LockSessionTest, AClientThatNeverReadsIsNoLongerReadFrom) {
  constexpr uint64_t kLimit = 4;
  auto s = NewSession(kLimit);
  s->TakeWrites(false);
  std::vector<v1::LockCall> calls;
  for (uint64_t id = 1; id <= kLimit; ++id) {
    calls.push_back(AcquireCall(id, absl::StrCat("r", id), "alice", Seconds(10)));
  }
  s->Send(calls);
  ASSERT_TRUE(s->WaitForWritesStarted(1));
  ASSERT_TRUE(s->ReadPending());
  calls.clear();
  for (uint64_t id = kLimit + 1; id <= 2 * kLimit; ++id)
    calls.push_back(DescribeCall(id, "r1"));
  s->Send(calls);
  manager_->Sync();
  EXPECT_FALSE(s->ReadPending());  // kLimit answers unsent: no more reading
  s->TakeWrites(true);
  for (uint64_t id = 1; id <= 2 * kLimit; ++id) EXPECT_THAT(s->AnswerStatus(id), IsOk());
  EXPECT_TRUE(s->ReadPending());
}

TEST_F(LockSessionTest, HalfCloseAnswersEveryCallThenEndsOkAndTheLeasesStay) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "mine", "alice", Seconds(10)),
           AcquireCall(2, "r", "alice", Seconds(10), Seconds(5))});  // parked
  s->HalfClose();
  const uint64_t token = Granted(*s, 1);
  EXPECT_FALSE(s->finished());  // call 2 still parked
  clock_.AdvanceBy(Seconds(5));
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, IsOk());
  EXPECT_FALSE(s->WaitForAnswer(2)->acquire().acquired());
  ResourceInfo mine = Describe("mine");
  EXPECT_TRUE(mine.held);  // the stream's end left its lease alone...
  EXPECT_EQ(mine.token, token);
  clock_.AdvanceBy(Seconds(5));  // ...until its TTL
  EXPECT_FALSE(Describe("mine").held);
}

TEST_F(LockSessionTest, ACancelledStreamCancelsItsParkedAcquiresAndKeepsItsLeases) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "mine", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  s->Send({AcquireCall(2, "r", "alice", Seconds(10), Seconds(30))});
  Settle(*s);
  ASSERT_EQ(Describe("r").waiters, 1u);
  s->Cancel();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(Describe("r").waiters, 0u);
  EXPECT_EQ(Describe("mine").token, token);
  s.reset();  // detached: its lease's expiry finds no listener
  clock_.AdvanceBy(Seconds(10));
  EXPECT_FALSE(Describe("mine").held);
}

TEST_F(LockSessionTest, ShutdownAnswersWhatWasReadThenEndsUnavailable) {
  auto s = NewSession();
  AcquireElsewhere("r", "bob");
  s->Send({AcquireCall(1, "r", "alice", Seconds(10), Seconds(30)),
           AcquireCall(2, "mine", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 2);
  manager_->Shutdown();
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("shutting down")));
  EXPECT_THAT(s->AnswerStatus(1), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_GT(token, 0u);
  // A stream that starts now ends at once.
  auto late = NewSession();
  ASSERT_OK_AND_ASSIGN(absl::Status refused, late->WaitForFinish());
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(late->reads_started(), 0);
}

TEST_F(LockSessionTest,
       AFailedCommitEndsTheStreamUnavailableAndARenewOnANewOneListensAgain) {
  auto s = NewSession();
  s->Send({AcquireCall(1, "r", "alice", Seconds(10))});
  const uint64_t token = Granted(*s, 1);
  faulty_->FailNthCommit(1);
  s->Send({AcquireCall(2, "s", "alice", Seconds(10))});
  EXPECT_THAT(s->AnswerStatus(2), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_OK_AND_ASSIGN(absl::Status end, s->WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("renew them")));
  auto again = NewSession();
  again->Send({RenewCall(1, "r", token, Seconds(1))});
  ASSERT_THAT(again->AnswerStatus(1), IsOk());
  clock_.AdvanceBy(Seconds(1));
  EXPECT_THAT(again->WaitForLost(token), IsOk());
}

TEST_F(LockSessionTest, AStreamWhoseCallerIsUnknownEndsAtOnceWithThatStatus) {
  LockSessionHarness s(
      manager_, StreamLimits(), nullptr,
      absl::PermissionDeniedError("a forwarded call did not say whose it is"));
  ASSERT_OK_AND_ASSIGN(absl::Status end, s.WaitForFinish());
  EXPECT_THAT(end, StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(LockSessionTest, TheCallersCertificateIsTheHolderAndSignaturesAreChecked) {
  absl::StatusOr<std::string> key = NewKeyLine("k1", /*sign=*/true);
  ASSERT_THAT(key, IsOk());
  absl::StatusOr<KeyRing> keys = KeyRing::Parse(*key, "test keys");
  ASSERT_THAT(keys, IsOk());
  TokenSigner signer(*std::move(keys));
  LockSessionHarness s(manager_, StreamLimits(), &signer, Caller{true, "CN=alice"});
  s.Send({AcquireCall(1, "r", "app", Seconds(10))});
  ASSERT_OK_AND_ASSIGN(v1::LockResult granted, s.WaitForAnswer(1));
  ASSERT_TRUE(granted.acquire().acquired());
  EXPECT_FALSE(granted.acquire().signature().mac().empty());
  EXPECT_EQ(Describe("r").holder, "CN=alice/app");
  // Renew without the signature: refused like the unary call.
  s.Send({RenewCall(2, "r", granted.acquire().token(), Seconds(10))});
  absl::Status denied = s.AnswerStatus(2);
  EXPECT_THAT(denied, StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(InfoOf(denied).reason, ErrorReason::kBadSignature);
  v1::LockCall signed_renew = RenewCall(3, "r", granted.acquire().token(), Seconds(10));
  *signed_renew.mutable_renew()->mutable_signature() = granted.acquire().signature();
  s.Send({signed_renew});
  EXPECT_THAT(s.AnswerStatus(3), IsOk());
}

}  // namespace
}  // namespace fencegate::lockservice
