// EtcdSession and LeaderElection on a single-member etcd started by the test
// (StoreUnderTest's shared cluster, through shared_etcd_fixture.h). Waits
// are conditions awaited under a deadline; where the session's own clock
// matters it is a FakeClock.
#include "lockservice/etcd/leader_election.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockservice/etcd/etcd_session.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/shared_etcd_fixture.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

using ::fencegate::testing::IsOk;
using TermEnd = LeaderElection::TermEnd;

// Generous: other engineers build on the same two cores.
constexpr absl::Duration kPatience = absl::Seconds(30);

// Polls `done` under the deadline.
bool PollUntil(const std::function<bool()>& done) {
  const absl::Time give_up = absl::Now() + kPatience;
  while (!done()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  return true;
}

class ElectionRecorder final : public LeaderElection::Delegate {
 public:
  absl::Status StartTerm(const LeaderGuard& guard) override {
    absl::MutexLock lock(&mu_);
    terms_.push_back(guard);
    leading_ = true;
    return absl::OkStatus();
  }
  void EndTerm(TermEnd why) override {
    absl::MutexLock lock(&mu_);
    ends_.push_back(why);
    leading_ = false;
  }
  void LeaderChanged(const std::string& address) override {
    absl::MutexLock lock(&mu_);
    leader_ = address;
  }

  // Waits until `done` holds. It runs with mu_ held (the analysis cannot
  // see that through the lambdas, hence their ABSL_NO_THREAD_SAFETY_ANALYSIS).
  bool WaitUntil(std::function<bool(ElectionRecorder&)> done) {
    absl::MutexLock lock(&mu_);
    auto met = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done(*this); };
    return mu_.AwaitWithTimeout(absl::Condition(&met), kPatience);
  }
  bool WaitLeading() {
    return WaitUntil([](ElectionRecorder& r) ABSL_NO_THREAD_SAFETY_ANALYSIS { return r.leading_; });
  }

  absl::Mutex mu_;
  std::vector<LeaderGuard> terms_ ABSL_GUARDED_BY(mu_);
  std::vector<TermEnd> ends_ ABSL_GUARDED_BY(mu_);
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  std::string leader_ ABSL_GUARDED_BY(mu_);
};

class LeaderElectionTest : public testing::SharedEtcdTest {
 protected:
  void SetUp() override {
    SharedEtcdTest::SetUp();
    key_ = absl::StrCat(UniquePrefix("election-test"), "leader");
  }

  std::unique_ptr<LeaderElection> Elect(const std::string& address, ElectionRecorder* recorder,
                                        Clock* clock) {
    LeaderElection::Options options;
    options.key = key_;
    options.value = address;
    options.session_ttl = absl::Seconds(60);  // expiry is not what is tested here
    auto election = std::make_unique<LeaderElection>(client_, clock, options, recorder);
    election->Start();
    return election;
  }

  std::string key_;
  std::unique_ptr<Clock> real_clock_ = NewRealClock();
};

TEST_F(LeaderElectionTest, SessionIsLostOnceItsOwnClockPassesAliveUntil) {
  testing::FakeClock clock;
  absl::Notification lost;
  // Keep-alives go out every TTL / 3 = 20 s of real time: none in this test.
  auto session = EtcdSession::Start(client_, &clock, absl::Seconds(60), kPatience,
                                    [&lost] { lost.Notify(); });
  ASSERT_THAT(session, IsOk());
  EXPECT_EQ((*session)->ttl(), absl::Seconds(60));
  EXPECT_EQ((*session)->alive_until(), clock.Now() + absl::Seconds(54));  // 10% margin
  clock.AdvanceBy(absl::Seconds(54) - absl::Milliseconds(1));
  EXPECT_TRUE((*session)->alive());
  clock.AdvanceBy(absl::Milliseconds(1));
  // etcd still has the lease; the process cannot prove it, so it gives up.
  EXPECT_TRUE(lost.HasBeenNotified());
  EXPECT_FALSE((*session)->alive());
}

TEST_F(LeaderElectionTest, SessionIsLostWhenEtcdNoLongerHasTheLease) {
  absl::Notification lost;
  auto session = EtcdSession::Start(client_, real_clock_.get(), absl::Seconds(1), kPatience,
                                    [&lost] { lost.Notify(); });
  ASSERT_THAT(session, IsOk());
  ASSERT_THAT(client_->LeaseRevoke((*session)->lease_id(), absl::Now() + kPatience), IsOk());
  EXPECT_TRUE(lost.WaitForNotificationWithTimeout(kPatience));
  EXPECT_FALSE((*session)->alive());
}

TEST_F(LeaderElectionTest, KeepAlivesMoveAliveUntilForward) {
  auto session = EtcdSession::Start(client_, real_clock_.get(), absl::Seconds(1), kPatience,
                                    [] {});
  ASSERT_THAT(session, IsOk());
  const absl::Time first = (*session)->alive_until();
  const absl::Time give_up = absl::Now() + kPatience;
  while ((*session)->alive_until() < first + absl::Seconds(1) && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  EXPECT_GE((*session)->alive_until(), first + absl::Seconds(1));
  EXPECT_TRUE((*session)->alive());
}

TEST_F(LeaderElectionTest, OneLeadsTheOtherFollowsAndTakesOverWhenItStops) {
  ElectionRecorder a, b;
  auto election_a = Elect("a:1", &a, real_clock_.get());
  ASSERT_TRUE(a.WaitLeading());
  auto election_b = Elect("b:2", &b, real_clock_.get());
  ASSERT_TRUE(b.WaitUntil([](ElectionRecorder& r) ABSL_NO_THREAD_SAFETY_ANALYSIS { return r.leader_ == "a:1"; }));
  {
    absl::MutexLock lock(&b.mu_);
    EXPECT_FALSE(b.leading_);
  }
  // A clean stop revokes a's lease: b leads at once, not a TTL later.
  const absl::Time stopped = absl::Now();
  election_a->Stop();
  ASSERT_TRUE(b.WaitLeading());
  EXPECT_LT(absl::Now() - stopped, absl::Seconds(30));  // the TTL is 60 s
  absl::MutexLock la(&a.mu_), lb(&b.mu_);
  ASSERT_EQ(a.ends_.size(), 1u);
  EXPECT_EQ(a.ends_[0], TermEnd::kStopped);
  ASSERT_EQ(b.terms_.size(), 1u);
  EXPECT_GT(b.terms_[0].create_revision, a.terms_[0].create_revision);
}

TEST_F(LeaderElectionTest, StepDownEndsTheTermAndANewTermBegins) {
  ElectionRecorder a;
  auto election = Elect("a:1", &a, real_clock_.get());
  ASSERT_TRUE(a.WaitLeading());
  int64_t first;
  {
    absl::MutexLock lock(&a.mu_);
    first = a.terms_[0].create_revision;
  }
  election->StepDown(first - 1);  // not this term: ignored
  election->StepDown(first);
  ASSERT_TRUE(a.WaitUntil([](ElectionRecorder& r) ABSL_NO_THREAD_SAFETY_ANALYSIS { return r.terms_.size() == 2 && r.leading_; }));
  absl::MutexLock lock(&a.mu_);
  EXPECT_EQ(a.ends_[0], TermEnd::kSteppedDown);
  EXPECT_GT(a.terms_[1].create_revision, first);
}

TEST_F(LeaderElectionTest, ALeaderThatCannotProveItsLeaseEndsItsTermAndANewOneBegins) {
  testing::FakeClock clock_a;
  ElectionRecorder a, b;
  auto election_a = Elect("a:1", &a, &clock_a);
  ASSERT_TRUE(a.WaitLeading());
  auto election_b = Elect("b:2", &b, real_clock_.get());
  ASSERT_TRUE(b.WaitUntil([](ElectionRecorder& r) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return r.leader_ == "a:1";
  }));
  int64_t first;
  {
    absl::MutexLock lock(&a.mu_);
    first = a.terms_[0].create_revision;
  }
  // a's clock says its lease may have expired (a long pause, say).
  clock_a.AdvanceBy(absl::Seconds(60));
  ASSERT_TRUE(a.WaitUntil([](ElectionRecorder& r) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return !r.ends_.empty();
  }));
  {
    absl::MutexLock lock(&a.mu_);
    EXPECT_EQ(a.ends_[0], TermEnd::kSessionLost);
  }
  // It revoked its lease, so a new term begins at once: b's, or a's again
  // with a new session (both campaign when the key goes).
  int64_t next = 0;
  ASSERT_TRUE(PollUntil([&] {
    absl::MutexLock la(&a.mu_), lb(&b.mu_);
    if (b.leading_) next = b.terms_.back().create_revision;
    if (a.terms_.size() > 1 && a.leading_) next = a.terms_.back().create_revision;
    return next != 0;
  }));
  EXPECT_GT(next, first);
}

}  // namespace
}  // namespace fencegate::lockservice
