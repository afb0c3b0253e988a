// Elections on the Session stream without gRPC (lock_session_fixture.h):
// Campaign, Proclaim, Leader and Resign get their unary calls' answers, and
// a term the stream campaigned for is listened to as an Acquire's lease is.
#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_session_fixture.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ::absl::Seconds;
using ::fencegate::testing::StatusIs;

// Elections on the stream (docs/semantics.md, "Elections"): each call gets
// its unary call's answer, and a term the stream campaigned for is
// listened to as an Acquire's lease is.
TEST_F(LockSessionTest, ElectionCallsGetTheirUnaryAnswersAndALostTermIsPushed) {
  auto s = NewSession();
  v1::LockCall campaign;
  campaign.set_request_id(1);
  campaign.mutable_campaign()->set_election("jobs");
  campaign.mutable_campaign()->set_candidate("a");
  campaign.mutable_campaign()->set_value("10.0.0.1");
  campaign.mutable_campaign()->set_ttl_ms(1000);
  s->Send({campaign});
  ASSERT_OK_AND_ASSIGN(v1::LockResult led, s->WaitForAnswer(1));
  ASSERT_EQ(led.result_case(), v1::LockResult::kAcquire);
  ASSERT_TRUE(led.acquire().acquired());
  const uint64_t term = led.acquire().token();

  v1::LockCall proclaim;
  proclaim.set_request_id(2);
  proclaim.mutable_proclaim()->set_election("jobs");
  proclaim.mutable_proclaim()->set_term(term);
  proclaim.mutable_proclaim()->set_value("10.0.0.2");
  v1::LockCall leader;
  leader.set_request_id(3);
  leader.mutable_leader()->set_election("jobs");
  v1::LockCall stale = proclaim;
  stale.set_request_id(4);
  stale.mutable_proclaim()->set_term(term + 1000);
  s->Send({proclaim, leader, stale});
  ASSERT_OK_AND_ASSIGN(v1::LockResult said, s->WaitForAnswer(2));
  ASSERT_OK_AND_ASSIGN(v1::LockResult who, s->WaitForAnswer(3));
  ASSERT_EQ(said.result_case(), v1::LockResult::kProclaim);
  EXPECT_EQ(said.proclaim().seq(), 1u);
  ASSERT_EQ(who.result_case(), v1::LockResult::kLeader);
  EXPECT_TRUE(who.leader().state().leader());
  EXPECT_EQ(who.leader().state().term(), term);
  EXPECT_EQ(who.leader().state().value(), "10.0.0.2");
  EXPECT_EQ(who.leader().state().candidate(), "a");
  EXPECT_THAT(s->AnswerStatus(4), StatusIs(absl::StatusCode::kAborted));

  // The term runs out unrenewed: pushed, as a lease's end is.
  clock_.AdvanceBy(Seconds(1));
  ASSERT_OK_AND_ASSIGN(v1::LeaseLost lost, s->WaitForLost(term));
  EXPECT_EQ(lost.resource(), "jobs");
  EXPECT_EQ(lost.reason(), v1::LeaseLost::EXPIRED);

  // A resign ends the next term; answered, not pushed.
  campaign.set_request_id(5);
  s->Send({campaign});
  ASSERT_OK_AND_ASSIGN(v1::LockResult again, s->WaitForAnswer(5));
  v1::LockCall resign;
  resign.set_request_id(6);
  resign.mutable_resign()->set_election("jobs");
  resign.mutable_resign()->set_term(again.acquire().token());
  s->Send({resign});
  ASSERT_OK_AND_ASSIGN(v1::LockResult resigned, s->WaitForAnswer(6));
  EXPECT_EQ(resigned.result_case(), v1::LockResult::kResign);
  leader.set_request_id(7);
  s->Send({leader});
  ASSERT_OK_AND_ASSIGN(v1::LockResult nobody, s->WaitForAnswer(7));
  EXPECT_FALSE(nobody.leader().state().leader());
  Settle(*s);
  EXPECT_EQ(s->lost().size(), 1u);
}

}  // namespace
}  // namespace fencegate::lockservice
