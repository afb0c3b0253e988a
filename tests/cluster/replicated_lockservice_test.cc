// Several real fencegate-lockservice processes on one etcd: the leader
// serves, a standby forwards; a paused leader loses its term and cannot
// answer from its stale memory; the term guard refuses a deposed leader's
// commit; tokens keep growing across terms. No sleeps: every wait polls a
// condition under a deadline.
#include <signal.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "harness/temp_dir.h"
#include "tests/cluster/cluster_client.h"
#include "tests/cluster/leader_and_standby.h"
#include "tests/cluster/lockservice_cluster.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::testing {
namespace {

using ::absl::Seconds;
using ::testing::HasSubstr;

constexpr absl::Duration kReplicationPatience = Seconds(60);

using ReplicatedLockServiceTest = LeaderAndStandbyTest;

TEST_F(ReplicatedLockServiceTest, StandbyForwardsEveryCallWithItsAnswer) {
  StartCluster();
  InstanceStub leader = Stub(leader_);
  InstanceStub standby = Stub(standby_);

  auto alice = standby.Acquire("r", "alice", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(alice, IsOk());
  ASSERT_TRUE(alice->acquired());
  auto seen = leader.Describe("r");
  ASSERT_THAT(seen, IsOk());
  EXPECT_EQ(seen->holder(), "alice");
  EXPECT_EQ(seen->token(), alice->token());

  auto bob = standby.Acquire("r", "bob", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(bob, IsOk());
  EXPECT_FALSE(bob->acquired());
  EXPECT_EQ(bob->holder_token(), alice->token());

  // Errors come back with their details: a stale renew is ABORTED, and says
  // which token holds the lock.
  auto stale = standby.Renew("r", alice->token() + 1000, Seconds(60));
  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted, HasSubstr("lease lost")));
  ASSERT_TRUE(GetErrorInfo(stale.status()).has_value());
  EXPECT_EQ(GetErrorInfo(stale.status())->current_token, alice->token());

  // A parked Acquire through the standby is granted when the lock frees.
  absl::StatusOr<v1::AcquireResponse> carol;
  std::thread waiter([&] { carol = standby.Acquire("r", "carol", Seconds(60), Seconds(50)); });
  const absl::Time give_up = absl::Now() + kReplicationPatience;
  while (absl::Now() < give_up) {  // until carol is queued at the leader
    auto info = leader.Describe("r");
    if (info.ok() && info->waiters() == 1) break;
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  ASSERT_THAT(standby.Release("r", alice->token()), IsOk());
  waiter.join();
  ASSERT_THAT(carol, IsOk());
  EXPECT_TRUE(carol->acquired());
  EXPECT_GT(carol->token(), alice->token());
}

TEST_F(ReplicatedLockServiceTest, PausedLeaderLosesItsTermAndTheStandbyTakesOver) {
  StartCluster();
  InstanceStub old_leader = Stub(leader_);
  InstanceStub standby = Stub(standby_);
  auto held = old_leader.Acquire("held", "alice", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(held, IsOk());
  ASSERT_TRUE(held->acquired());

  // A GC pause of the lock service itself, longer than its etcd session.
  ASSERT_THAT(cluster_->Pause(leader_), IsOk());
  uint64_t probe_token = 0;
  const absl::Time give_up = absl::Now() + kReplicationPatience;
  while (probe_token == 0 && absl::Now() < give_up) {
    auto probe = standby.Acquire("probe", "p", Seconds(60), absl::ZeroDuration(), Seconds(2));
    if (probe.ok() && probe->acquired()) probe_token = probe->token();
  }
  ASSERT_GT(probe_token, held->token()) << "the standby never took over";
  // The lease granted by the paused leader survived, held for a full TTL
  // again from the new term's start.
  auto info = standby.Describe("held");
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->holder(), "alice");
  EXPECT_EQ(info->token(), held->token());
  EXPECT_GT(info->remaining_ms(), 50000);

  // A call that reached the paused leader is answered after it resumes:
  // never from its stale memory as leader.
  absl::StatusOr<v1::AcquireResponse> late;
  std::thread caller([&] {
    late = old_leader.Acquire("fresh", "mallory", Seconds(60), absl::ZeroDuration());
  });
  auto stolen = standby.Acquire("fresh", "owner", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(stolen, IsOk());
  ASSERT_TRUE(stolen->acquired());
  cluster_->Resume(leader_);
  caller.join();
  if (late.ok()) {
    // Forwarded to the new leader once the old one stepped down.
    EXPECT_FALSE(late->acquired());
    EXPECT_EQ(late->holder_token(), stolen->token());
  } else {
    EXPECT_THAT(late, StatusIs(absl::StatusCode::kUnavailable));
  }
  // The old leader is a standby now: it forwards, and tokens keep growing.
  // Its health may still say SERVING from its term until it has seen the
  // term end, and it refuses calls (UNAVAILABLE, retry) from then until it
  // has learned the new leader: wait for it to forward.
  ASSERT_THAT(PollUntil([&] { return old_leader.Describe("held").ok(); },
                        kReplicationPatience, "the old leader forwarding to the new one"),
              IsOk());
  auto later = old_leader.Acquire("later", "q", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(later, IsOk());
  EXPECT_GT(later->token(), stolen->token());
  EXPECT_THAT(cluster_->instance(leader_).LogTail(100000), HasSubstr("ends"));
}

TEST_F(ReplicatedLockServiceTest, APausedLeaderWhoseClockStoppedTooIsStoppedByTheGuard) {
  // A VM freeze stops the leader's monotonic clock with it, so on resuming
  // its lease looks alive to it: a long session TTL plays that part here.
  LockServiceClusterOptions options;
  options.session_ttl = Seconds(60);
  StartCluster(options);
  InstanceStub old_leader = Stub(leader_);
  auto alice = old_leader.Acquire("x", "alice", Seconds(3), absl::ZeroDuration());
  ASSERT_THAT(alice, IsOk());
  ASSERT_TRUE(alice->acquired());
  absl::StatusOr<v1::AcquireResponse> bob;
  std::thread waiter([&] {
    bob = old_leader.Acquire("x", "bob", Seconds(60), Seconds(60), Seconds(30), "bob-1");
  });
  const absl::Time give_up = absl::Now() + kReplicationPatience;
  while (absl::Now() < give_up) {  // until bob is queued
    auto info = old_leader.Describe("x");
    if (info.ok() && info->waiters() == 1) break;
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }

  ASSERT_THAT(cluster_->Pause(leader_), IsOk());
  // Meanwhile its term ends in etcd (its key is gone; its lease lives on)
  // and the standby takes over.
  etcdserverpb::TxnRequest txn;
  txn.add_success()->mutable_request_delete_range()->set_key("/fencegate/lockservice/leader");
  ASSERT_THAT(cluster_->etcd().client().Txn(txn, absl::Now() + Seconds(30)), IsOk());
  auto new_leader = cluster_->WaitLeader();
  ASSERT_TRUE(new_leader.ok()) << new_leader.status();
  ASSERT_EQ(*new_leader, standby_);

  // Resumed, the old leader sees alice's lease expire and hands "x" to bob:
  // that commit is refused by the term guard, so bob is never told he holds
  // it by a leader that no longer leads.
  cluster_->Resume(leader_);
  waiter.join();
  EXPECT_THAT(bob, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(cluster_->instance(leader_).LogTail(100000),
              HasSubstr("the commit was refused"));
  // The new leader's view stands: alice (re-armed for her TTL) or nobody
  // after that, never bob from the old term; tokens keep growing.
  auto client = FailoverClient(cluster_->Target({standby_}));
  auto x = client->Describe("x");
  ASSERT_THAT(x, IsOk());
  EXPECT_TRUE(!x->held || x->token == alice->token()) << x->holder;
  auto later = client->Acquire("y", "carol");
  ASSERT_THAT(later, IsOk());
  EXPECT_GT(later->token, alice->token());
}

TEST_F(ReplicatedLockServiceTest, TheTermGuardRefusesADeposedLeadersCommit) {
  StartCluster();
  InstanceStub leader = Stub(leader_);
  auto held = leader.Acquire("a", "alice", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(held, IsOk());
  // The leader key disappears behind the leader's back while its session
  // stays alive, so nothing but the guard can tell it that it was deposed.
  etcdserverpb::TxnRequest txn;
  txn.add_success()->mutable_request_delete_range()->set_key("/fencegate/lockservice/leader");
  ASSERT_THAT(cluster_->etcd().client().Txn(txn, absl::Now() + Seconds(30)), IsOk());

  // Its next commit, a Describe's barrier, is refused: no stale answer.
  EXPECT_THAT(leader.Describe("a"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("no longer leads")));
  EXPECT_THAT(cluster_->instance(leader_).LogTail(100000),
              HasSubstr("the commit was refused"));

  // A new term serves; the lease survived; tokens keep growing.
  auto client = FailoverClient(cluster_->Target());
  auto b = client->Acquire("b", "bob");
  ASSERT_THAT(b, IsOk());
  EXPECT_GT(b->token, held->token());
  auto a = client->Describe("a");
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->token, held->token());
  EXPECT_EQ(a->holder, "alice");
}

// Reads a WatchFences stream until a message satisfies `done`; false if the
// stream ended first.
bool ReadUntil(grpc::ClientReader<v1::WatchFencesResponse>& stream,
               const std::function<bool(const v1::WatchFencesResponse&)>& done) {
  v1::WatchFencesResponse message;
  while (stream.Read(&message)) {
    if (done(message)) return true;
  }
  return false;
}

TEST_F(ReplicatedLockServiceTest, FenceStreamsGoThroughAStandbyAndResumeAfterAFailover) {
  StartCluster();
  auto standby_channel = grpc::CreateChannel(cluster_->instance(standby_).address(),
                                             grpc::InsecureChannelCredentials());
  auto stub = v1::LockService::NewStub(standby_channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kReplicationPatience));
  v1::WatchFencesRequest request;
  auto stream = stub->WatchFences(&context, request);
  ASSERT_TRUE(ReadUntil(*stream, [](const auto& m) { return m.caught_up(); }));

  InstanceStub standby = Stub(standby_);
  auto granted = standby.Acquire("f", "gw-test", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(granted, IsOk());
  uint64_t seen = 0;
  ASSERT_TRUE(ReadUntil(*stream, [&](const v1::WatchFencesResponse& m) {
    for (const v1::FenceEvent& e : m.events()) {
      if (e.resource() == "f" && e.kind() == v1::FenceEvent::GRANTED) seen = e.position();
    }
    return seen != 0;
  }));
  EXPECT_EQ(seen, granted->token());

  // The leader dies: the relayed stream ends, and a new one through the
  // same instance, now the leader, resumes after the last position seen.
  cluster_->Kill(leader_);
  v1::WatchFencesResponse rest;
  while (stream->Read(&rest)) {
  }
  EXPECT_THAT(FromGrpcStatus(stream->Finish()), StatusIs(absl::StatusCode::kUnavailable));
  auto later = FailoverClient(cluster_->Target({standby_}))->Acquire("g", "gw-test");
  ASSERT_THAT(later, IsOk());
  ASSERT_TRUE(later->acquired);
  grpc::ClientContext again_context;
  again_context.set_deadline(absl::ToChronoTime(absl::Now() + kReplicationPatience));
  request.set_after_position(seen);
  auto again = stub->WatchFences(&again_context, request);
  std::vector<std::pair<std::string, uint64_t>> replayed;
  ASSERT_TRUE(ReadUntil(*again, [&](const v1::WatchFencesResponse& m) {
    for (const v1::FenceEvent& e : m.events()) replayed.emplace_back(e.resource(), e.position());
    return m.caught_up();
  }));
  EXPECT_THAT(replayed, ::testing::ElementsAre(::testing::Pair("g", later->token)));
  again_context.TryCancel();
}

// Elections on etcd (docs/semantics.md, "Elections"): every call through a
// standby; the leader's value survives the failover (it is in the term's
// lease row in etcd), and an observer's stream, relayed by the standby,
// ends with the failover and resumes after the last change it saw, with
// nothing seen twice.
TEST_F(ReplicatedLockServiceTest,
       ElectionsGoThroughAStandbyAndObserversResumeAfterAFailover) {
  StartCluster();
  std::unique_ptr<client::LockClient> lock = FailoverClient(cluster_->Target({standby_}));
  absl::Mutex mu;
  std::vector<std::tuple<bool, uint64_t, uint64_t, std::string>> seen;
  absl::Status observed;
  std::thread observer([&] {
    observed = lock->Observe(
        "jobs",
        [&](const client::ElectionState& state) {
          absl::MutexLock hold(&mu);
          seen.emplace_back(state.leader, state.term, state.seq, state.value);
          return state.leader || state.term == 0;  // until a term ends
        },
        kReplicationPatience * 2);
  });
  const auto seen_count = [&] {
    absl::MutexLock hold(&mu);
    return seen.size();
  };
  ASSERT_THAT(PollUntil([&] { return seen_count() >= 1; }, kReplicationPatience,
                        "the observer's first state"),
              IsOk());

  client::CampaignOptions options;
  options.ttl = Seconds(60);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<client::Leadership> leading,
                       lock->Campaign("jobs", "a", "v0", options));
  const uint64_t term = leading->term();
  ASSERT_OK_AND_ASSIGN(uint64_t seq, leading->Proclaim("v1"));
  EXPECT_EQ(seq, 1u);
  ASSERT_THAT(PollUntil([&] { return seen_count() >= 3; }, kReplicationPatience,
                        "the observer sees the term and the proclaim"),
              IsOk());

  cluster_->Kill(leader_);
  ASSERT_OK_AND_ASSIGN(client::ElectionState after, lock->Leader("jobs"));
  EXPECT_TRUE(after.leader);
  EXPECT_EQ(after.term, term);
  EXPECT_EQ(after.seq, 1u);
  EXPECT_EQ(after.value, "v1");
  EXPECT_FALSE(leading->lease().lost());
  ASSERT_THAT(leading->Resign(), IsOk());
  observer.join();
  EXPECT_THAT(observed, IsOk());
  absl::MutexLock hold(&mu);
  using Seen = std::tuple<bool, uint64_t, uint64_t, std::string>;
  EXPECT_THAT(
      seen, ::testing::ElementsAre(Seen{false, 0, 0, ""}, Seen{true, term, 0, "v0"},
                                   Seen{true, term, 1, "v1"}, Seen{false, term, 2, ""}));
}

}  // namespace
}  // namespace fencegate::testing
