// The client library's LockClient and Lease against an in-process lock
// service (real gRPC, real clock), over both transports (unary calls and
// the Session stream); what only the stream does (pushed lease ends) is in
// lock_client_stream_test.cc. Where time must pass, tests poll a condition
// under a deadline; none sleeps a fixed time.
#include "fencegate/client/lock_client.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/free_port.h"
#include "harness/temp_dir.h"
#include "lockservice/server/lock_server.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_client_fixture.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;

class LockClientTest : public LockClientFixture {};

TEST_P(LockClientTest, LeaseRenewsItselfAcrossManyTtls) {
  ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease("r", "alice", Ttl(absl::Seconds(1))));
  const absl::Time until = absl::Now() + absl::Seconds(5);
  int polls = 0;
  while (absl::Now() < until) {  // five TTLs, checked all along
    ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r"));
    ASSERT_TRUE(state.held) << "lease lapsed after " << polls << " polls";
    ASSERT_EQ(state.token, lease->token());
    ASSERT_FALSE(lease->lost());
    ++polls;
  }
  EXPECT_GT(lease->valid_until(), SteadyClock().Now());
}

// Several resources at once, through the client: all or nothing, one
// token each, the set renewed and released together.
TEST_P(LockClientTest, AMultiLeaseHoldsItsResourcesTogetherAndReleasesThemTogether) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<MultiLease> set,
                       client_->AcquireMultiLease({"a", "b", "c"}, "alice"));
  ASSERT_EQ(set->size(), 3u);
  EXPECT_EQ(set->lease(1).resource(), "b");
  EXPECT_GT(set->lease(2).token(), set->lease(1).token());
  EXPECT_EQ(client_->Describe("c")->token, set->lease(2).token());
  ASSERT_THAT(set->Renew(), IsOk());
  ASSERT_THAT(set->Check(), IsOk());
  // One of them busy: none is granted, and the answer names it.
  ASSERT_OK_AND_ASSIGN(MultiAcquireOutcome busy, client_->AcquireMany({"d", "b"}, "bob"));
  EXPECT_FALSE(busy.acquired);
  EXPECT_EQ(busy.busy_resource, "b");
  EXPECT_EQ(busy.holder_token, set->lease(1).token());
  EXPECT_FALSE(client_->Describe("d")->held);
  ASSERT_THAT(set->Release(), IsOk());
  EXPECT_TRUE(set->lost());
  for (const char* name : {"a", "b", "c"}) EXPECT_FALSE(client_->Describe(name)->held);
  // Bad lists are the service's to refuse, naming the field.
  EXPECT_THAT(
      client_->AcquireMany({"a", "a"}, "bob").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("resources")));
}

// A waiting multi-resource Acquire is granted when the last of its
// resources frees, over the wire as in the manager.
TEST_P(LockClientTest, AWaitingMultiAcquireIsGrantedWhenItsLastResourceFrees) {
  ASSERT_OK_AND_ASSIGN(auto held, client_->AcquireLease("b", "bob"));
  AcquireOptions wait;
  wait.wait = absl::Seconds(30);
  std::optional<absl::StatusOr<MultiAcquireOutcome>> got;
  absl::Notification done;
  std::thread waiter([&] {
    got = client_->AcquireMany({"a", "b"}, "alice", wait);
    done.Notify();
  });
  // Parked once a's queue has it (Describe counts it).
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (absl::Now() < until && client_->Describe("a")->waiters == 0) {
  }
  EXPECT_EQ(client_->Describe("a")->waiters, 1u);
  EXPECT_FALSE(done.HasBeenNotified());
  ASSERT_THAT(held->Release(), IsOk());
  waiter.join();
  ASSERT_TRUE(got.has_value());
  ASSERT_THAT(*got, IsOk());
  EXPECT_TRUE((*got)->acquired);
  ASSERT_EQ((*got)->leases.size(), 2u);
  EXPECT_GT((*got)->leases[1].token, held->token());
}

// The threads of this process (every one, gRPC's included).
int ThreadCount() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

// Renewals run on the clock's timer, not a thread per lease: 200 leases
// that renew themselves add no thread to speak of (a thread per lease
// would add 200).
TEST_P(LockClientTest, LeasesRenewWithoutAThreadEach) {
  ASSERT_OK_AND_ASSIGN(auto first,
                       client_->AcquireLease("r-0", "alice", Ttl(absl::Seconds(3))));
  const int before = ThreadCount();
  std::vector<std::unique_ptr<Lease>> leases;
  for (int i = 1; i <= 200; ++i) {
    ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease(absl::StrCat("r-", i), "alice",
                                                           Ttl(absl::Seconds(3))));
    leases.push_back(std::move(lease));
  }
  EXPECT_LT(ThreadCount() - before, 8) << "threads before " << before;
  // Past a whole TTL, every one is still valid: each renewed (validity is
  // counted from a renewal's sending, so none lasts a TTL without one).
  const absl::Time until = leases.back()->valid_until() + absl::Milliseconds(500);
  for (absl::Time now = SteadyClock().Now(); now < until; now = SteadyClock().Now()) {
    ASSERT_FALSE(first->lost());
    absl::SleepFor(std::min(until - now, absl::Milliseconds(100)));  // time passing
  }
  for (auto& lease : leases) ASSERT_FALSE(lease->lost()) << lease->resource();
  ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r-200"));
  EXPECT_TRUE(state.held);
}

// On the client's clock (a fake one here): the renewals fall due as it
// advances, each one extends validity from when it was sent, and once the
// service stops answering the lease lapses at the end of the last
// confirmed validity, by that clock.
TEST_P(LockClientTest, RenewalsRunOnTheLeasesClockAndALapseIsLostByIt) {
  testing::FakeClock clock;
  LeaseOptions lease_options;
  lease_options.clock = &clock;
  ASSERT_OK_AND_ASSIGN(auto lease,
                       client_->AcquireLease("r", "alice", Ttl(absl::Seconds(30)),
                                             std::move(lease_options)));
  const absl::Time first = lease->valid_until();
  // A third of the TTL (less up to a tenth, plus up to a 100 ms tick): a
  // renewal is due.
  clock.AdvanceBy(absl::Seconds(10) + absl::Milliseconds(100));
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (lease->valid_until() == first && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));  // polls a real answer, under a deadline
  }
  const absl::Time renewed = lease->valid_until();
  ASSERT_GT(renewed, first);
  EXPECT_LE(renewed, clock.Now() + absl::Seconds(30));
  EXPECT_FALSE(lease->lost());
  server_->Shutdown();  // no renewal is confirmed from here on
  clock.AdvanceBy(renewed - clock.Now() - absl::Milliseconds(1));
  // The renewals sent meanwhile failed (UNAVAILABLE); validity stands.
  EXPECT_FALSE(lease->lost());
  clock.AdvanceBy(absl::Milliseconds(2));
  EXPECT_TRUE(lease->lost());
  EXPECT_TRUE(IsLeaseLost(lease->Check()));
}

TEST_P(LockClientTest, DestroyingALeaseReleasesIt) {
  ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease("r", "alice"));
  EXPECT_TRUE(client_->Describe("r")->held);
  lease.reset();
  EXPECT_FALSE(client_->Describe("r")->held);
}

TEST_P(LockClientTest, ALeaseThatLapsedOnlyOnTheClientIsStillReleased) {
  // The client's clock jumps past validity (a paused process, say) while
  // the service, on its own clock, still holds the lease: as after a
  // restart, which restores a lease for a whole TTL. Releasing must still
  // free it instead of leaving the resource blocked for that TTL.
  testing::FakeClock client_clock;
  LeaseOptions lease_options;
  lease_options.clock = &client_clock;
  // Paused: no renewal goes out before the lapse (the renewal timers on
  // the fake clock would fire as it advances).
  lease_options.renew_fraction = 2;
  ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease("r", "alice", Ttl(absl::Seconds(60)),
                                                         std::move(lease_options)));
  client_clock.AdvanceBy(absl::Seconds(61));
  EXPECT_THAT(lease->Check(), StatusIs(absl::StatusCode::kAborted));
  ASSERT_TRUE(client_->Describe("r")->held);
  EXPECT_THAT(lease->Release(), IsOk());
  EXPECT_FALSE(client_->Describe("r")->held);
  EXPECT_THAT(lease->Release(), IsOk());  // idempotent
}

TEST_P(LockClientTest, RefusedRenewIsReportedAtOnce) {
  std::atomic<int> lost_calls{0};
  LeaseOptions lease_options;
  lease_options.on_lost = [&](const absl::Status& why) {
    EXPECT_TRUE(IsLeaseLost(why)) << why;
    ++lost_calls;
  };
  ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease("r", "alice", Ttl(absl::Seconds(30)),
                                                         std::move(lease_options)));
  // Someone frees the lock behind the lease's back (think: an operator).
  ASSERT_THAT(client_->Release("r", lease->token()), IsOk());
  EXPECT_TRUE(IsLeaseLost(lease->Renew()));
  EXPECT_TRUE(lease->lost());
  EXPECT_TRUE(IsLeaseLost(lease->Check()));
  EXPECT_TRUE(lease->WaitLost(absl::ZeroDuration()));
  EXPECT_EQ(lost_calls.load(), 1);
}

TEST_P(LockClientTest, UnreachableServerLosesTheLeaseWithinItsTtl) {
  std::atomic<int> lost_calls{0};
  LeaseOptions lease_options;
  lease_options.on_lost = [&](const absl::Status&) { ++lost_calls; };
  const absl::Duration ttl = absl::Milliseconds(900);
  ASSERT_OK_AND_ASSIGN(auto lease, client_->AcquireLease("r", "alice", Ttl(ttl),
                                                         std::move(lease_options)));
  server_->Shutdown();  // every renew from now on fails
  const absl::Time valid_until = lease->valid_until();
  // valid_until is (send time of the last acknowledged renew) + TTL, on the
  // client's clock: never later than the server's own expiry.
  EXPECT_LE(valid_until, SteadyClock().Now() + ttl);
  // Let the client's clock reach the end of the lease (a point in time,
  // not an event to wait for).
  for (absl::Time now = SteadyClock().Now(); now < valid_until; now = SteadyClock().Now()) {
    absl::SleepFor(valid_until - now);
  }
  EXPECT_TRUE(lease->lost()) << "still valid at the end of its TTL";
  EXPECT_TRUE(IsLeaseLost(lease->Check()));
  EXPECT_TRUE(lease->WaitLost(absl::Seconds(30)));
  EXPECT_EQ(lost_calls.load(), 1);
}

TEST_P(LockClientTest, ReentrantAcquireThroughTheLibrary) {
  ASSERT_OK_AND_ASSIGN(auto outer, client_->AcquireLease("r", "worker-7"));
  ASSERT_OK_AND_ASSIGN(auto inner, client_->AcquireLease("r", "worker-7"));
  EXPECT_EQ(inner->token(), outer->token());
  EXPECT_EQ(client_->Describe("r")->hold_count, 2u);
  inner.reset();
  ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r"));
  EXPECT_TRUE(state.held);
  EXPECT_EQ(state.hold_count, 1u);
  outer.reset();
  EXPECT_FALSE(client_->Describe("r")->held);
}

TEST_P(LockClientTest, NotAcquiredIsATypedErrorNamingTheHolder) {
  ASSERT_OK_AND_ASSIGN(auto held, client_->AcquireLease("r", "alice"));
  auto second = client_->AcquireLease("r", "bob");
  EXPECT_TRUE(IsNotAcquired(second.status())) << second.status();
  EXPECT_EQ(CurrentToken(second.status()), held->token());
  ASSERT_OK_AND_ASSIGN(AcquireOutcome raw, client_->Acquire("r", "bob"));
  EXPECT_FALSE(raw.acquired);
  EXPECT_EQ(raw.holder_token, held->token());
}

TEST_P(LockClientTest, StaleReleaseCannotFreeTheNewerHolder) {
  LeaseOptions never_renew;
  never_renew.renew_fraction = 100;
  ASSERT_OK_AND_ASSIGN(auto old_lease, client_->AcquireLease("r", "alice",
                                                             Ttl(absl::Milliseconds(200)),
                                                             std::move(never_renew)));
  ASSERT_TRUE(old_lease->WaitLost(absl::Seconds(30)));
  // The server expired it too (its expiry is never earlier than the client's).
  AcquireOptions wait = Ttl(absl::Seconds(30));
  wait.wait = absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(auto new_lease, client_->AcquireLease("r", "bob", wait));
  EXPECT_GT(new_lease->token(), old_lease->token());

  auto stale = client_->Release("r", old_lease->token());
  EXPECT_TRUE(IsLeaseLost(stale.status())) << stale.status();
  EXPECT_EQ(CurrentToken(stale.status()), new_lease->token());
  EXPECT_THAT(old_lease->Release(), IsOk());  // nothing to release: fine
  ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r"));
  EXPECT_TRUE(state.held);
  EXPECT_EQ(state.token, new_lease->token());
}

TEST_P(LockClientTest, UnavailableIsRetriedThenReported) {
  server_->Shutdown();
  const absl::Time start = absl::Now();
  auto outcome = client_->Acquire("r", "alice");
  EXPECT_THAT(outcome, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

// A clock that moves a minute each time it is read.
class JumpingClock final : public Clock {
 public:
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    now_ += absl::Minutes(1);
    return now_;
  }
  TimerId RunAt(absl::Time, absl::AnyInvocable<void()>) override { return 0; }
  void Cancel(TimerId) override {}

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
};

// Both clients measure a call's deadline on ClientOptions::clock: on a
// clock that runs a minute per reading, a call with a minute to retry an
// unreachable server gives up after its first attempt, long before a real
// minute has passed.
TEST_P(LockClientTest, DeadlinesRunOnTheClockOfTheClientOptions) {
  const std::string address = "127.0.0.1:" + std::to_string(server_->port());
  server_->Shutdown();
  JumpingClock clock;
  ClientOptions options;
  options.call_timeout = absl::Minutes(1);
  options.clock = &clock;
  options.lock_transport = GetParam();
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LockClient> locks,
                       LockClient::Connect(address, options));
  EXPECT_THAT(locks->Describe("r"), ::testing::Not(IsOk()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<GatewayClient> gateway,
                       GatewayClient::Connect(address, options));
  EXPECT_THAT(gateway->Describe("r"), ::testing::Not(IsOk()));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
}

TEST_P(LockClientTest, BadInputComesBackAsInvalidArgument) {
  auto outcome = client_->Acquire("", "alice");
  EXPECT_THAT(outcome, StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("resource")));
}

TEST_P(LockClientTest, SharedLeasesAndPermitsThroughTheLibrary) {
  AcquireOptions shared;
  shared.mode = LeaseMode::kShared;
  ASSERT_OK_AND_ASSIGN(auto reader1, client_->AcquireLease("r", "reader-1", shared));
  ASSERT_OK_AND_ASSIGN(auto reader2, client_->AcquireLease("r", "reader-2", shared));
  EXPECT_EQ(reader1->mode(), LeaseMode::kShared);
  EXPECT_NE(reader1->token(), reader2->token());
  ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r"));
  EXPECT_EQ(state.mode, LeaseMode::kShared);
  EXPECT_EQ(state.holders, 2u);
  EXPECT_EQ(state.token, reader1->token());  // the oldest
  ASSERT_OK_AND_ASSIGN(AcquireOutcome writer, client_->Acquire("r", "writer"));
  EXPECT_FALSE(writer.acquired);
  EXPECT_EQ(writer.mode, LeaseMode::kExclusive);
  // Each lease renews and releases by its own token.
  EXPECT_THAT(reader1->Renew(), IsOk());
  reader1.reset();
  EXPECT_EQ(client_->Describe("r")->holders, 1u);
  EXPECT_FALSE(reader2->lost());
  reader2.reset();
  EXPECT_FALSE(client_->Describe("r")->held);

  AcquireOptions permit;
  permit.mode = LeaseMode::kPermit;
  permit.permits = 2;
  ASSERT_OK_AND_ASSIGN(auto first, client_->AcquireLease("p", "worker-1", permit));
  ASSERT_OK_AND_ASSIGN(AcquireOutcome second, client_->Acquire("p", "worker-2", permit));
  EXPECT_TRUE(second.acquired);
  EXPECT_EQ(second.mode, LeaseMode::kPermit);
  EXPECT_EQ(first->mode(), LeaseMode::kPermit);
  EXPECT_TRUE(IsNotAcquired(client_->AcquireLease("p", "worker-3", permit).status()));
  ASSERT_OK_AND_ASSIGN(state, client_->Describe("p"));
  EXPECT_EQ(state.mode, LeaseMode::kPermit);
  EXPECT_EQ(state.permits, 2u);
  EXPECT_EQ(state.holders, 2u);
  permit.permits = 3;  // another size while in use
  EXPECT_THAT(
      client_->Acquire("p", "worker-3", permit),
      StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("permits")));
  EXPECT_THAT(client_->Acquire("p", "reader", shared),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("mode")));
}

TEST_P(LockClientTest, AModeThatIsNoLeaseModeIsRefusedNamingIt) {
  AcquireOptions options;
  options.mode = static_cast<LeaseMode>(7);
  auto outcome = client_->Acquire("r", "alice", options);
  EXPECT_THAT(outcome, StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("mode is 7")));
  EXPECT_FALSE(client_->Describe("r")->held);
}

// The asynchronous forms, whatever the blocking calls' transport: a closed
// loop of lock cycles run inside their own callbacks, each release inside
// the acquire's callback, and then the resource is free.
TEST_P(LockClientTest, AsyncLockCyclesRunInsideTheirCallbacks) {
  constexpr int kCycles = 50;
  struct Loop {
    absl::Mutex mu;
    std::vector<uint64_t> tokens ABSL_GUARDED_BY(mu);
    absl::Status failed ABSL_GUARDED_BY(mu);
    absl::Notification done;
  } loop;
  std::function<void(int)> cycle = [&](int left) {
    client_->AcquireAsync(
        "r", "alice", Ttl(absl::Seconds(10)),
        [&, left](absl::StatusOr<AcquireOutcome> granted) {
          if (!granted.ok() || !granted->acquired) {
            absl::MutexLock lock(&loop.mu);
            loop.failed =
                granted.ok() ? absl::InternalError("not acquired") : granted.status();
            loop.done.Notify();
            return;
          }
          {
            absl::MutexLock lock(&loop.mu);
            loop.tokens.push_back(granted->token);
          }
          client_->ReleaseAsync("r", granted->token,
                                [&, left](absl::StatusOr<uint32_t> holds) {
                                  if (!holds.ok() || *holds != 0 || left == 1) {
                                    absl::MutexLock lock(&loop.mu);
                                    if (!holds.ok()) loop.failed = holds.status();
                                    loop.done.Notify();
                                    return;
                                  }
                                  cycle(left - 1);
                                });
        });
  };
  cycle(kCycles);
  ASSERT_TRUE(loop.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  absl::MutexLock lock(&loop.mu);
  ASSERT_TRUE(loop.failed.ok()) << loop.failed;
  ASSERT_EQ(loop.tokens.size(), static_cast<size_t>(kCycles));
  for (int i = 1; i < kCycles; ++i) EXPECT_LT(loop.tokens[i - 1], loop.tokens[i]);
  ASSERT_OK_AND_ASSIGN(LockState state, client_->Describe("r"));
  EXPECT_FALSE(state.held);
}

TEST_P(LockClientTest, AnAsyncAcquireOfAHeldResourceIsNotAcquiredAndAStaleReleaseIsLost) {
  ASSERT_OK_AND_ASSIGN(auto lease,
                       client_->AcquireLease("r", "alice", Ttl(absl::Seconds(10))));
  std::promise<absl::StatusOr<AcquireOutcome>> acquired;
  client_->AcquireAsync("r", "bob", Ttl(absl::Seconds(10)),
                        [&](absl::StatusOr<AcquireOutcome> outcome) {
                          acquired.set_value(std::move(outcome));
                        });
  absl::StatusOr<AcquireOutcome> outcome = acquired.get_future().get();
  ASSERT_THAT(outcome, IsOk());
  EXPECT_FALSE(outcome->acquired);
  EXPECT_EQ(outcome->holder_token, lease->token());
  std::promise<absl::StatusOr<uint32_t>> released;
  client_->ReleaseAsync("r", lease->token() + 1, [&](absl::StatusOr<uint32_t> holds) {
    released.set_value(std::move(holds));
  });
  absl::StatusOr<uint32_t> holds = released.get_future().get();
  EXPECT_TRUE(IsLeaseLost(holds.status())) << holds.status();
  EXPECT_FALSE(lease->lost());
}

INSTANTIATE_TEST_SUITE_P(Transports, LockClientTest,
                         ::testing::Values(Transport::kUnary, Transport::kStream),
                         TransportName);

}  // namespace
}  // namespace fencegate::client
