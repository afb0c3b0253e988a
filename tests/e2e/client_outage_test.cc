// The client library's default retry budget against a real outage: the
// lock service is killed (kill -9, by PID) while calls are parked in it and
// stays down for kOutage, longer than the library's old budget (5 attempts,
// under a second), then comes back on the same port and database. Calls
// issued before and during the outage, with the fixture's default
// ClientOptions, must end with the answer they would have had without it,
// and leave no ghost waiter behind: a queued place the restarted service
// keeps for a client that gave up holds its queue for
// --waiter_reattach_grace (5 s).
//
// kOutage is the fault itself, not a wait for something: the test checks
// that the calls are still in flight when it ends. Everything after the
// restart polls or waits under generous deadlines.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/client/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "harness/poll.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using client::AcquireOptions;
using client::AcquireOutcome;
using client::LockState;
using testing::IsOk;

// Longer than the old budget, well within the new one (call_timeout, 15 s).
constexpr absl::Duration kOutage = absl::Seconds(3);
// Patience for anything after the restart, on a loaded 2-core machine.
constexpr absl::Duration kOutagePatience = absl::Seconds(60);

AcquireOptions Wait(absl::Duration wait) {
  AcquireOptions options;
  options.ttl = absl::Seconds(60);
  options.wait = wait;
  return options;
}

// Runs `call` on a thread of its own.
template <typename Call>
auto Async(Call call) {
  return std::async(std::launch::async, std::move(call));
}

// Whether `result` is still unanswered at `until` (it may be answered
// sooner, which is the failure this checks for).
template <typename T>
bool PendingAt(std::future<T>& result, absl::Time until) {
  return result.wait_until(absl::ToChronoTime(until)) == std::future_status::timeout;
}

// The answer, once it comes (within kOutagePatience). (A future of std::async
// waits for its thread when destroyed, so no call outlives the test.)
template <typename T>
T Answer(std::future<T>& result) {
  if (result.wait_for(absl::ToChronoNanoseconds(kOutagePatience)) !=
      std::future_status::ready) {
    return absl::DeadlineExceededError(
        absl::StrCat("no answer within ", absl::FormatDuration(kOutagePatience)));
  }
  return result.get();
}

class ClientOutageTest : public E2eTest {
 protected:
  void KillLockService() {
    port_ = lockservice_->port();
    lockservice_->Kill();  // by its PID; reaps it
    lockservice_.reset();
  }

  // The same binary on the same port and database.
  absl::Status RestartLockService() {
    auto restarted = testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                                   {"--db=" + dir_.File("locks.db")},
                                                   dir_.path(), "lockservice", port_);
    if (!restarted.ok()) return restarted.status();
    lockservice_ = *std::move(restarted);
    return absl::OkStatus();
  }

  absl::Status WaitForWaiters(const std::string& resource, uint32_t waiters) {
    return testing::PollUntil(
        [&] {
          absl::StatusOr<LockState> state = lock_->Describe(resource);
          return state.ok() && state->waiters == waiters;
        },
        kOutagePatience, "the expected number of waiters");
  }

  int port_ = 0;
};

TEST_F(ClientOutageTest,
       CallsMadeBeforeAndDuringAnOutageSucceedWhenTheLockServiceIsBack) {
  ASSERT_OK_AND_ASSIGN(AcquireOutcome alice,
                       lock_->Acquire("r", "alice", Wait(absl::ZeroDuration())));
  ASSERT_TRUE(alice.acquired);
  client::LeaseOptions renew_often;
  renew_often.renew_fraction = 0.1;  // renewals fall due during the outage
  AcquireOptions long_lease;
  long_lease.ttl = absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(
      auto dave, lock_->AcquireLease("held", "dave", long_lease, std::move(renew_often)));
  // Bob queues for "r" before the crash: his place is persisted.
  auto bob = Async([&] { return lock_->Acquire("r", "bob", Wait(kOutagePatience)); });
  ASSERT_THAT(WaitForWaiters("r", 1), IsOk());

  KillLockService();
  const absl::Time back_at = absl::Now() + kOutage;
  auto release = Async([&] { return lock_->Release("r", alice.token); });
  auto carol = Async([&] { return lock_->Acquire("r", "carol", Wait(kOutagePatience)); });
  EXPECT_TRUE(PendingAt(release, back_at)) << "alice's release gave up during the outage";
  EXPECT_TRUE(PendingAt(bob, back_at)) << "bob's acquire gave up during the outage";
  EXPECT_TRUE(PendingAt(carol, back_at)) << "carol's acquire gave up during the outage";
  ASSERT_THAT(RestartLockService(), IsOk());

  // Alice's release, retried with its request id, frees "r"...
  absl::StatusOr<uint32_t> released = Answer(release);
  ASSERT_THAT(released, IsOk());
  EXPECT_EQ(*released, 0u);
  // ...for bob, whose retry took back the place he had before the crash,
  // ahead of carol who queued during the outage.
  absl::StatusOr<AcquireOutcome> bob_outcome = Answer(bob);
  ASSERT_THAT(bob_outcome, IsOk());
  ASSERT_TRUE(bob_outcome->acquired);
  EXPECT_GT(bob_outcome->token, alice.token);
  ASSERT_THAT(WaitForWaiters("r", 1), IsOk());  // carol, and nobody else
  ASSERT_OK_AND_ASSIGN(LockState state, lock_->Describe("r"));
  EXPECT_EQ(state.holder, "bob");
  EXPECT_EQ(state.token, bob_outcome->token);

  ASSERT_THAT(lock_->Release("r", bob_outcome->token), IsOk());
  absl::StatusOr<AcquireOutcome> carol_outcome = Answer(carol);
  ASSERT_THAT(carol_outcome, IsOk());
  ASSERT_TRUE(carol_outcome->acquired);
  EXPECT_GT(carol_outcome->token, bob_outcome->token);
  ASSERT_THAT(lock_->Release("r", carol_outcome->token), IsOk());
  // No ghost: nothing queued, nothing held.
  ASSERT_OK_AND_ASSIGN(state, lock_->Describe("r"));
  EXPECT_FALSE(state.held);
  EXPECT_EQ(state.waiters, 0u);

  // Dave's lease was renewed across the outage (the renewal retries until
  // the lease would lapse): still valid, still his on the service.
  EXPECT_THAT(dave->Check(), IsOk());
  EXPECT_THAT(dave->Renew(), IsOk());
  ASSERT_OK_AND_ASSIGN(state, lock_->Describe("held"));
  EXPECT_EQ(state.token, dave->token());
}

TEST_F(ClientOutageTest, AnAcquireWhoseWaitRanOutDuringTheOutageEndsItsPlaceInTheQueue) {
  ASSERT_OK_AND_ASSIGN(AcquireOutcome alice,
                       lock_->Acquire("r", "alice", Wait(absl::ZeroDuration())));
  ASSERT_TRUE(alice.acquired);
  // Eve queues; the lock service is down from before her wait ends until
  // well after.
  constexpr absl::Duration kEveWaits = absl::Seconds(4);
  const absl::Time eve_gives_up = absl::Now() + kEveWaits;
  auto eve = Async([&] { return lock_->Acquire("r", "eve", Wait(kEveWaits)); });
  ASSERT_THAT(WaitForWaiters("r", 1), IsOk());

  KillLockService();
  ASSERT_TRUE(PendingAt(eve, absl::Now()))
      << "eve's wait ran out before the kill: the machine stalled for seconds";
  EXPECT_TRUE(
      PendingAt(eve, std::max(absl::Now() + kOutage, eve_gives_up + absl::Seconds(1))))
      << "eve's acquire gave up during the outage";
  ASSERT_THAT(RestartLockService(), IsOk());

  // Her retry, a try-lock now (nothing is left of her wait) with the same
  // request id, takes back her place and ends it: the honest answer, not
  // acquired, and no ghost that would hold the queue for 5 s.
  absl::StatusOr<AcquireOutcome> outcome = Answer(eve);
  ASSERT_THAT(outcome, IsOk());
  EXPECT_FALSE(outcome->acquired);
  EXPECT_EQ(outcome->holder_token, alice.token);
  ASSERT_OK_AND_ASSIGN(LockState state, lock_->Describe("r"));
  EXPECT_EQ(state.waiters, 0u);
  // So once alice releases, the next comer gets "r" at once.
  ASSERT_THAT(lock_->Release("r", alice.token), IsOk());
  ASSERT_OK_AND_ASSIGN(AcquireOutcome frank,
                       lock_->Acquire("r", "frank", Wait(absl::ZeroDuration())));
  EXPECT_TRUE(frank.acquired);
}

}  // namespace
}  // namespace fencegate::e2e
