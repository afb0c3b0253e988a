// The client library's elections (fencegate/client/election.h) against an
// in-process lock service, over both transports: a Leadership hands over
// when it resigns, and a deposed one's Resign says so.
#include <memory>
#include <string>
#include <thread>

#include "fencegate/client/election.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_client_fixture.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;

class LockClientElectionTest : public LockClientFixture {
 protected:
  CampaignOptions Options(absl::Duration wait) {
    CampaignOptions options;
    options.ttl = absl::Seconds(10);
    options.wait = wait;
    return options;
  }

  // b campaigns for "e" (waiting `wait`) on a thread of its own while `a`
  // leads; once b is in line, `a` resigns. b's outcome.
  absl::StatusOr<std::unique_ptr<Leadership>> HandOverTo(Leadership& a,
                                                         absl::Duration wait) {
    absl::StatusOr<std::unique_ptr<Leadership>> b;
    std::thread candidate([&] { b = client_->Campaign("e", "b", "vb", Options(wait)); });
    absl::Status in_line = ::fencegate::testing::PollUntil(
        [&] {
          absl::StatusOr<LockState> state = client_->Describe("e");
          return state.ok() && state->waiters == 1;
        },
        absl::Seconds(10), "b in line");
    EXPECT_THAT(in_line, IsOk());
    EXPECT_THAT(a.Resign(), IsOk());
    candidate.join();
    return b;
  }
};

TEST_P(LockClientElectionTest, AResignHandsOverAndADeposedLeadersResignIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Leadership> a,
                       client_->Campaign("e", "a", "va", Options(absl::ZeroDuration())));
  absl::StatusOr<std::unique_ptr<Leadership>> b = HandOverTo(*a, absl::Seconds(20));
  ASSERT_THAT(b, IsOk());
  EXPECT_GT((*b)->term(), a->term());
  EXPECT_TRUE(a->lease().lost());
  ASSERT_OK_AND_ASSIGN(ElectionState state, client_->Leader("e"));
  EXPECT_TRUE(state.leader);
  EXPECT_EQ(state.candidate, "b");

  // An operator ends b's term: b's Resign is refused, and b is lost.
  ASSERT_THAT(client_->Release("e", (*b)->term(), "", (*b)->lease().signature()), IsOk());
  absl::Status late = (*b)->Resign();
  EXPECT_TRUE(IsLeaseLost(late)) << late;
  EXPECT_TRUE((*b)->lease().lost());
  ASSERT_OK_AND_ASSIGN(state, client_->Leader("e"));
  EXPECT_FALSE(state.leader);
  EXPECT_EQ(state.term, (*b)->term());
}

INSTANTIATE_TEST_SUITE_P(Transports, LockClientElectionTest,
                         ::testing::Values(Transport::kUnary, Transport::kStream),
                         TransportName);

// A service with a --max_wait below the client's first step (5 min)
// refuses that wait naming its limit; the campaign goes on in steps of it.
class LockClientShortMaxWaitTest : public LockClientElectionTest {
 protected:
  static constexpr absl::Duration kMaxWait = absl::Milliseconds(300);
  void Configure(lockservice::LockServerOptions& options) override {
    options.limits.max_wait = kMaxWait;
  }
};

TEST_P(LockClientShortMaxWaitTest, ACampaignWaitsItsWholeWaitInStepsOfTheServersMaxWait) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Leadership> a,
                       client_->Campaign("e", "a", "va", Options(absl::ZeroDuration())));
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Leadership>> b =
      client_->Campaign("e", "b", "vb", Options(3 * kMaxWait));
  EXPECT_TRUE(IsNotAcquired(b.status())) << b.status();
  EXPECT_GE(absl::Now() - start, 3 * kMaxWait) << "the whole wait, not one step of it";

  // Waiting for good: elected once a resigns.
  b = HandOverTo(*a, absl::InfiniteDuration());
  ASSERT_THAT(b, IsOk());
  EXPECT_GT((*b)->term(), a->term());
}

INSTANTIATE_TEST_SUITE_P(Transports, LockClientShortMaxWaitTest,
                         ::testing::Values(Transport::kUnary, Transport::kStream),
                         TransportName);

}  // namespace
}  // namespace fencegate::client
