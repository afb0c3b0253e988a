// The client library's retry loop (client/retry.h) on a FakeClock: the
// pause is a fake that moves the clock, so whole budgets of many seconds
// run in no time, and every attempt and pause is seen exactly.
#include "client/retry.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::FakeClock;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class RetryTest : public ::testing::Test {
 protected:
  // Runs RetryUnavailable until `deadline`; attempt i (from 0) answers
  // answers_[i], or the last one when there are fewer. Each pause moves
  // the clock by all it may, or by early_pause when set (the channel
  // connected again).
  absl::Status Run(absl::Time deadline) {
    return RetryUnavailable(
        policy_, clock_, deadline,
        [&] {
          attempt_times_.push_back(clock_.Now());
          const size_t i = std::min(attempt_times_.size(), answers_.size()) - 1;
          return answers_[i];
        },
        [&](absl::Duration at_most) {
          pauses_.push_back(at_most);
          clock_.AdvanceBy(early_pause_ ? std::min(*early_pause_, at_most) : at_most);
        });
  }

  FakeClock clock_;
  RetryPolicy policy_;  // the default: no cap on attempts
  std::vector<absl::Status> answers_ = {absl::UnavailableError("connection refused")};
  std::optional<absl::Duration> early_pause_;
  std::vector<absl::Time> attempt_times_;
  std::vector<absl::Duration> pauses_;
};

TEST_F(RetryTest, RetriesUnavailableUntilTheDeadlineAndStopsThere) {
  const absl::Time start = clock_.Now();
  const absl::Time deadline = start + absl::Seconds(15);
  absl::Status status = Run(deadline);
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("connection refused")));
  EXPECT_THAT(status.message(), HasSubstr("the call's deadline passed"));
  // Far more than the old default's 5 attempts: pauses of at most 1 s
  // over 15 s.
  EXPECT_GE(attempt_times_.size(), 15u);
  // Every attempt started before the deadline; the last pause ended right
  // at it, and nothing came after.
  for (absl::Time t : attempt_times_) EXPECT_LT(t, deadline);
  EXPECT_EQ(clock_.Now(), deadline);
  EXPECT_EQ(pauses_.size(), attempt_times_.size());
}

TEST_F(RetryTest, NeverPausesPastTheDeadline) {
  policy_.initial_backoff = absl::Seconds(2);  // every step longer than what is left
  const absl::Time deadline = clock_.Now() + absl::Milliseconds(700);
  EXPECT_THAT(Run(deadline), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_EQ(pauses_.size(), 1u);
  EXPECT_EQ(pauses_[0], absl::Milliseconds(700));
  EXPECT_EQ(attempt_times_.size(), 1u);
  EXPECT_EQ(clock_.Now(), deadline);
}

TEST_F(RetryTest, BackoffDoublesWithJitterUpToTheMaximum) {
  Run(clock_.Now() + absl::Seconds(30)).IgnoreError();
  ASSERT_GE(pauses_.size(), 8u);
  absl::Duration step = policy_.initial_backoff;
  // All but the last, which the deadline may cut.
  for (size_t i = 0; i + 1 < pauses_.size(); ++i) {
    EXPECT_GE(pauses_[i], step / 2) << "pause " << i;
    EXPECT_LE(pauses_[i], step) << "pause " << i;
    step = std::min(step * 2, policy_.max_backoff);
  }
}

TEST_F(RetryTest, APauseThatEndsEarlyIsFollowedByAnAttemptAtOnce) {
  early_pause_ = absl::Milliseconds(1);  // the channel is back after 1 ms
  answers_ = {absl::UnavailableError("down"), absl::UnavailableError("down"),
              absl::OkStatus()};
  const absl::Time start = clock_.Now();
  EXPECT_THAT(Run(start + absl::Seconds(15)), IsOk());
  ASSERT_EQ(attempt_times_.size(), 3u);
  EXPECT_EQ(attempt_times_[2] - start, absl::Milliseconds(2));
}

TEST_F(RetryTest, StopsAtTheFirstAnswerThatIsNotUnavailable) {
  answers_ = {absl::UnavailableError("down"), absl::UnavailableError("down"),
              absl::AbortedError("lease lost")};
  EXPECT_THAT(Run(clock_.Now() + absl::Seconds(15)),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(attempt_times_.size(), 3u);

  // Only UNAVAILABLE is retried: not a timed-out attempt, not anything else.
  for (absl::StatusCode code :
       {absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kResourceExhausted,
        absl::StatusCode::kInvalidArgument, absl::StatusCode::kOk}) {
    attempt_times_.clear();
    answers_ = {absl::Status(code, "x")};
    EXPECT_EQ(Run(clock_.Now() + absl::Seconds(15)).code(), code);
    EXPECT_EQ(attempt_times_.size(), 1u) << absl::StatusCodeToString(code);
  }
}

TEST_F(RetryTest, HonoursACapOnAttempts) {
  policy_.max_attempts = 3;
  absl::Status unavailable = absl::UnavailableError("commit failed");
  ErrorInfo info;
  info.current_token = 42;
  SetErrorInfo(unavailable, info);
  answers_ = {unavailable};
  const absl::Time start = clock_.Now();
  absl::Status status = Run(start + absl::Seconds(15));
  EXPECT_EQ(attempt_times_.size(), 3u);
  EXPECT_EQ(pauses_.size(), 2u);
  EXPECT_LT(clock_.Now(), start + absl::Seconds(15));
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("commit failed")));
  EXPECT_THAT(status.message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_THAT(status.message(), HasSubstr("max_attempts"));
  // The annotation keeps the server's detail.
  ASSERT_TRUE(GetErrorInfo(status).has_value());
  EXPECT_EQ(GetErrorInfo(status)->current_token, 42u);
}

TEST_F(RetryTest, OneAttemptIsNeverRetriedAndReportedAsTheServerSaidIt) {
  policy_.max_attempts = 1;  // the torture workers' gateway client
  EXPECT_EQ(Run(clock_.Now() + absl::Seconds(15)),
            absl::UnavailableError("connection refused"));
  EXPECT_EQ(attempt_times_.size(), 1u);
  EXPECT_TRUE(pauses_.empty());
}

TEST_F(RetryTest, ACallsDeadlineIsCallTimeoutOrOneWholeAttempt) {
  ClientOptions options;  // call_timeout 15 s, rpc_timeout 5 s
  const absl::Time now = clock_.Now();
  EXPECT_EQ(CallDeadline(options, options.rpc_timeout, clock_), now + absl::Seconds(15));
  // A blocking Acquire that waits a minute: its wait plus one rpc_timeout.
  EXPECT_EQ(CallDeadline(options, absl::Seconds(60) + options.rpc_timeout, clock_),
            now + absl::Seconds(65));
  // An attempt is cut at the call's deadline.
  const absl::Time deadline = now + absl::Seconds(15);
  EXPECT_EQ(AttemptTimeout(deadline, options.rpc_timeout, clock_), absl::Seconds(5));
  clock_.AdvanceBy(absl::Seconds(13));
  EXPECT_EQ(AttemptTimeout(deadline, options.rpc_timeout, clock_), absl::Seconds(2));
}

}  // namespace
}  // namespace fencegate::client
