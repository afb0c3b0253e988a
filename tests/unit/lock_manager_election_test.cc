// LockManager's elections (elections.h; docs/semantics.md, "Elections"), on
// each store (lock_manager_fixture.h): a Campaign leads with its value, a
// Proclaim counts up within the term, a deposed leader can neither proclaim
// nor resign, a Resign ends the term whatever its holds, observers hear
// every change in (term, seq) order, and the value and its sequence number
// survive a restart.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/lock_manager_fixture.h"

namespace fencegate::lockservice {
namespace {

using ::testing::ElementsAre;

// What an observer heard, as (leader, term, seq, value).
using Heard = std::tuple<bool, uint64_t, uint64_t, std::string>;

class RecordingObserver final : public ElectionObserver {
 public:
  void Ref() override {}
  void Unref() override {}
  void OnChange(const ElectionChange& change) override {
    absl::MutexLock lock(&mu_);
    heard_.emplace_back(change.leader, change.term, change.seq, change.value);
  }
  void OnStopped(const absl::Status& why) override {
    absl::MutexLock lock(&mu_);
    stopped_ = why;
  }
  std::vector<Heard> heard() {
    absl::MutexLock lock(&mu_);
    return heard_;
  }
  absl::Status stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Heard> heard_;
  absl::Status stopped_;
};

AcquireArgs Campaign(std::string election, std::string candidate, std::string value,
                     absl::Duration ttl = Seconds(10),
                     absl::Duration wait = absl::ZeroDuration()) {
  AcquireArgs args = Args(std::move(election), std::move(candidate), ttl, wait);
  args.campaign = std::move(value);
  return args;
}

class LockManagerElectionTest : public LockManagerTest {
 protected:
  absl::StatusOr<ProclaimResult> Proclaim(const std::string& election, uint64_t term,
                                          std::string value) {
    auto slot = std::make_shared<Slot<ProclaimResult>>();
    manager_->Proclaim(
        ProclaimArgs{election, term, std::move(value), ""},
        [slot](absl::StatusOr<ProclaimResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  }

  absl::StatusOr<ReleaseResult> Resign(const std::string& election, uint64_t term) {
    ReleaseArgs args{election, term, "", ""};
    args.resign = true;
    auto slot = std::make_shared<Slot<ReleaseResult>>();
    manager_->Release(std::move(args), [slot](absl::StatusOr<ReleaseResult> r) {
      slot->Set(std::move(r));
    });
    manager_->Sync();
    return slot->get();
  }

  ElectionChange Leader(const std::string& election) {
    auto slot = std::make_shared<Slot<ElectionChange>>();
    manager_->Leader(
        election, [slot](absl::StatusOr<ElectionChange> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    absl::StatusOr<ElectionChange> state = slot->get();
    EXPECT_THAT(state, IsOk());
    return state.ok() ? *state : ElectionChange{};
  }

  // Campaigns and insists on leading; returns the term.
  uint64_t MustLead(const std::string& election, const std::string& candidate,
                    const std::string& value, absl::Duration ttl = Seconds(10)) {
    absl::StatusOr<AcquireResult> r = Acquire(Campaign(election, candidate, value, ttl));
    EXPECT_THAT(r, IsOk());
    if (!r.ok()) return 0;
    EXPECT_TRUE(r->acquired) << candidate << " does not lead " << election;
    return r->token;
  }
};

TEST_P(LockManagerElectionTest, ACampaignLeadsWithItsValueAndProclaimsCountUp) {
  const uint64_t term = MustLead("jobs", "a", "10.0.0.1:80");
  ElectionChange state = Leader("jobs");
  EXPECT_TRUE(state.leader);
  EXPECT_EQ(state.term, term);
  EXPECT_EQ(state.seq, 0u);
  EXPECT_EQ(state.value, "10.0.0.1:80");
  EXPECT_EQ(state.holder, "a");

  ASSERT_OK_AND_ASSIGN(ProclaimResult first, Proclaim("jobs", term, "10.0.0.1:81"));
  EXPECT_EQ(first.seq, 1u);
  ASSERT_OK_AND_ASSIGN(ProclaimResult second, Proclaim("jobs", term, "10.0.0.1:82"));
  EXPECT_EQ(second.seq, 2u);
  state = Leader("jobs");
  EXPECT_EQ(state.term, term);
  EXPECT_EQ(state.seq, 2u);
  EXPECT_EQ(state.value, "10.0.0.1:82");

  // Another candidate waits its turn: an election is an exclusive lease.
  ASSERT_OK_AND_ASSIGN(AcquireResult b, Acquire(Campaign("jobs", "b", "b")));
  EXPECT_FALSE(b.acquired);
  EXPECT_EQ(b.holder_token, term);
}

TEST_P(LockManagerElectionTest, ADeposedLeaderCanNeitherProclaimNorResign) {
  const uint64_t old_term = MustLead("jobs", "a", "a", Seconds(1));
  auto next = StartAcquire(Campaign("jobs", "b", "b", Seconds(10), Seconds(30)));
  manager_->Sync();
  EXPECT_FALSE(next->done());
  Advance(Seconds(1));  // a's lease runs out; b leads, in a larger term
  ASSERT_TRUE(next->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult b, next->get());
  ASSERT_TRUE(b.acquired);
  EXPECT_GT(b.token, old_term);

  EXPECT_THAT(Proclaim("jobs", old_term, "a again"),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("lease lost")));
  EXPECT_THAT(Resign("jobs", old_term), StatusIs(absl::StatusCode::kAborted));
  ElectionChange state = Leader("jobs");
  EXPECT_EQ(state.term, b.token);
  EXPECT_EQ(state.value, "b");  // a waiting candidate's value came with it
  EXPECT_EQ(state.seq, 0u);
}

TEST_P(LockManagerElectionTest, AResignEndsTheTermWhateverItsHolds) {
  const uint64_t term = MustLead("jobs", "a", "a");
  ASSERT_OK_AND_ASSIGN(AcquireResult again, Acquire(Campaign("jobs", "a", "ignored")));
  EXPECT_EQ(again.token, term);  // campaigning again: the same term, one hold
  EXPECT_EQ(again.hold_count, 1u);
  EXPECT_EQ(Leader("jobs").value, "a");
  ASSERT_OK_AND_ASSIGN(AcquireResult plain, Acquire(Args("jobs", "a")));
  EXPECT_EQ(plain.hold_count, 2u);  // a plain Acquire re-enters with a hold

  ASSERT_OK_AND_ASSIGN(ReleaseResult resigned, Resign("jobs", term));
  EXPECT_EQ(resigned.hold_count, 0u);
  EXPECT_FALSE(Leader("jobs").leader);
  EXPECT_GT(MustLead("jobs", "b", "b"), term);
}

TEST_P(LockManagerElectionTest, TwoParkedCampaignsOfOneCandidateHoldItsTermOnce) {
  const uint64_t first = MustLead("jobs", "a", "a");
  // b campaigns twice (a retry with a fresh request id, say); both wait.
  auto one = StartAcquire(Campaign("jobs", "b", "b", Seconds(10), Seconds(30)));
  auto two = StartAcquire(Campaign("jobs", "b", "b", Seconds(10), Seconds(30)));
  manager_->Sync();
  ASSERT_THAT(Resign("jobs", first), IsOk());
  ASSERT_TRUE(one->done() && two->done());
  ASSERT_OK_AND_ASSIGN(AcquireResult led, one->get());
  ASSERT_OK_AND_ASSIGN(AcquireResult again, two->get());
  EXPECT_EQ(again.token, led.token);
  EXPECT_EQ(again.hold_count, 1u);
  // So one release of its lease ends b's term.
  ASSERT_OK_AND_ASSIGN(ReleaseResult released, Release("jobs", led.token));
  EXPECT_EQ(released.hold_count, 0u);
  EXPECT_FALSE(Leader("jobs").leader);
}

TEST_P(LockManagerElectionTest, ObserversHearEveryChangeInOrder) {
  RecordingObserver observer;
  ASSERT_THAT(manager_->AddObserver("jobs", &observer), IsOk());
  manager_->Sync();
  const uint64_t t1 = MustLead("jobs", "a", "a1");
  ASSERT_THAT(Proclaim("jobs", t1, "a2"), IsOk());
  ASSERT_THAT(Resign("jobs", t1), IsOk());
  const uint64_t t2 = MustLead("jobs", "b", "b1", Seconds(1));
  Advance(Seconds(1));  // b's term runs out
  // A plain Acquire leads too: the election is the resource.
  const uint64_t t3 = MustAcquire("jobs", "c");
  MustAcquire("other", "d");  // another election: not heard

  EXPECT_THAT(observer.heard(),
              ElementsAre(Heard{false, 0, 0, ""}, Heard{true, t1, 0, "a1"},
                          Heard{true, t1, 1, "a2"}, Heard{false, t1, 2, ""},
                          Heard{true, t2, 0, "b1"}, Heard{false, t2, 1, ""},
                          Heard{true, t3, 0, ""}));

  // A second observer starts from the state now.
  RecordingObserver late;
  ASSERT_THAT(manager_->AddObserver("jobs", &late), IsOk());
  manager_->Sync();
  EXPECT_THAT(late.heard(), ElementsAre(Heard{true, t3, 0, ""}));

  manager_->RemoveObserver("jobs", &observer);
  manager_->RemoveObserver("jobs", &late);
  MustAcquire("jobs", "c");  // re-entered: no change, and nobody listens
  EXPECT_EQ(observer.heard().size(), 7u);
}

TEST_P(LockManagerElectionTest, AnObserverOfAnEndedTermHearsWhichTermEnded) {
  RecordingObserver observer;
  ASSERT_THAT(manager_->AddObserver("jobs", &observer), IsOk());
  const uint64_t term = MustLead("jobs", "a", "a");
  ASSERT_THAT(Resign("jobs", term), IsOk());
  RecordingObserver second;
  ASSERT_THAT(manager_->AddObserver("jobs", &second), IsOk());
  manager_->Sync();
  // Remembered while observed: the state says which term ended.
  EXPECT_THAT(second.heard(), ElementsAre(Heard{false, term, 1, ""}));
  manager_->RemoveObserver("jobs", &observer);
  manager_->RemoveObserver("jobs", &second);
}

TEST_P(LockManagerElectionTest, TheValueAndItsSequenceSurviveARestart) {
  const uint64_t term = MustLead("jobs", "a", "a1");
  ASSERT_THAT(Proclaim("jobs", term, "a2"), IsOk());
  ASSERT_THAT(Proclaim("jobs", term, "a3"), IsOk());
  MustAcquire("plain", "x");  // a lease with no value stays without one
  Restart();

  ElectionChange state = Leader("jobs");
  EXPECT_TRUE(state.leader);
  EXPECT_EQ(state.term, term);
  EXPECT_EQ(state.seq, 2u);
  EXPECT_EQ(state.value, "a3");
  ASSERT_OK_AND_ASSIGN(ProclaimResult next, Proclaim("jobs", term, "a4"));
  EXPECT_EQ(next.seq, 3u);
  // A renewal rewrites the lease's row: the value stays in it.
  ASSERT_THAT(Renew("jobs", term, Seconds(20)), IsOk());
  Restart();
  EXPECT_EQ(Leader("jobs").value, "a4");
  EXPECT_EQ(Leader("plain").value, "");
  EXPECT_EQ(Leader("plain").seq, 0u);
}

TEST_P(LockManagerElectionTest, BadInputNamesTheFieldAndChangesNothing) {
  limits_.max_election_value_bytes = 8;
  Restart();
  EXPECT_THAT(Acquire(Campaign("jobs", "a", std::string(9, 'v'))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("value")));
  AcquireArgs shared = Campaign("jobs", "a", "v");
  shared.mode = LeaseMode::kShared;
  EXPECT_THAT(Acquire(shared), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("mode: a campaign leads")));
  EXPECT_FALSE(Leader("jobs").leader);

  const uint64_t term = MustLead("jobs", "a", "v");
  EXPECT_THAT(Proclaim("jobs", term, std::string(9, 'v')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 8 bytes")));
  EXPECT_THAT(Proclaim("jobs", 0, "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("term")));
  AcquireArgs reader = Args("rw", "r");
  reader.mode = LeaseMode::kShared;
  ASSERT_OK_AND_ASSIGN(AcquireResult read, Acquire(reader));
  EXPECT_THAT(Proclaim("rw", read.token, "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exclusive lease")));
  EXPECT_EQ(Leader("jobs").value, "v");
  EXPECT_EQ(Leader("jobs").seq, 0u);
}

TEST_P(LockManagerElectionTest, ObserversAreStoppedAtShutdown) {
  RecordingObserver observer;
  ASSERT_THAT(manager_->AddObserver("jobs", &observer), IsOk());
  manager_->Sync();  // its first change told
  manager_->Shutdown();
  EXPECT_THAT(observer.stopped(), StatusIs(absl::StatusCode::kUnavailable));
  RecordingObserver late;
  EXPECT_THAT(manager_->AddObserver("jobs", &late),
              StatusIs(absl::StatusCode::kUnavailable));
}

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerElectionTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
