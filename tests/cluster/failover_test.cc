// Failovers under load, with real processes on loopback: the etcd leader
// is killed while many clients acquire and release; one of two lock-service
// instances is killed while clients hold leases. What the clients see is
// checked: never two holders at once, tokens strictly increasing, no
// acknowledged grant lost, leases that survive and stay usable with their
// tokens. No sleeps: every wait polls a condition under a deadline.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "fencegate/client/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_client.h"
#include "tests/cluster/load_history.h"
#include "tests/cluster/lockservice_cluster.h"
#include "tests/testing/status_matchers.h"
#include "harness/poll.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

using ::absl::Seconds;

constexpr absl::Duration kFailoverPatience = Seconds(90);

class FailoverTest : public ::testing::Test {
 protected:
  void StartCluster(int etcd_members) {
    LockServiceClusterOptions options;
    options.etcd_members = etcd_members;
    auto cluster = LockServiceCluster::Start(dir_.path(), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto leader = cluster_->WaitLeader();
    ASSERT_TRUE(leader.ok()) << leader.status();
    leader_ = *leader;
  }

  void TearDown() override {
    if (HasFailure() && cluster_ != nullptr) std::cerr << cluster_->LogTails();
  }

  TempDir dir_;
  std::unique_ptr<LockServiceCluster> cluster_;
  int leader_ = -1;
};

TEST_F(FailoverTest, KillingTheEtcdLeaderDuringLoadKeepsEveryGuarantee) {
  StartCluster(/*etcd_members=*/3);
  constexpr int kClients = 8;
  constexpr int kResources = 3;
  const std::string target = cluster_->Target();
  LoadHistory history(kResources);
  std::atomic<bool> stop{false};
  std::atomic<int> failed_calls{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto client = FailoverClient(target);
      absl::BitGen random;
      client::AcquireOptions acquire;
      acquire.ttl = Seconds(120);  // no lease expires during the test
      acquire.wait = Seconds(5);
      while (!stop.load()) {
        const int r = absl::Uniform(random, 0, kResources);
        const std::string resource = absl::StrCat("r", r);
        auto granted = client->Acquire(resource, absl::StrCat("client-", c), acquire);
        if (!granted.ok()) {
          ++failed_calls;
          continue;
        }
        if (!granted->acquired) continue;
        history.Granted(c, r, granted->token);
        history.Releasing(r);
        absl::StatusOr<uint32_t> released = client->Release(resource, granted->token);
        if (released.ok()) {
          history.Released(r, granted->token);
        } else {
          ++failed_calls;  // checked against the final state below
        }
      }
    });
  }
  ASSERT_THAT(PollUntil([&] { return history.acks() >= 50; }, kFailoverPatience, "load"),
              IsOk());

  auto etcd_leader = cluster_->etcd().Leader();
  ASSERT_TRUE(etcd_leader.ok()) << etcd_leader.status();
  history.Mark();
  ASSERT_THAT(cluster_->etcd().Kill(*etcd_leader), IsOk());
  // The load goes on through the etcd leader change...
  EXPECT_THAT(PollUntil([&] { return history.acks_since_mark() >= 50; }, kFailoverPatience,
                        "the lock service to recover from the etcd leader's death"),
              IsOk());
  // ...and through the old member's return.
  ASSERT_THAT(cluster_->etcd().Restart(*etcd_leader), IsOk());
  history.Mark();
  EXPECT_THAT(PollUntil([&] { return history.acks_since_mark() >= 20; }, kFailoverPatience,
                        "load after the old member's return"),
              IsOk());
  stop = true;
  for (std::thread& t : clients) t.join();

  EXPECT_THAT(history.violations(), ::testing::IsEmpty());
  // No acknowledged grant was lost: the last one of each resource is either
  // still held with its token, or was released (or its release was sent:
  // applied even if the answer got lost).
  auto client = FailoverClient(target);
  for (int r = 0; r < kResources; ++r) {
    std::optional<LoadHistory::Grant> last = history.Last(r);
    if (!last) continue;
    auto state = client->Describe(absl::StrCat("r", r));
    ASSERT_THAT(state, IsOk());
    if (state->held) {
      // Held: by that grant, or by a newer grant no client saw acknowledged
      // (its Acquire was applied but every answer was lost).
      EXPECT_GE(state->token, last->token) << "resource " << r;
      if (state->token == last->token) {
        EXPECT_FALSE(last->released) << "released, yet still held, resource " << r;
      }
    } else {
      EXPECT_TRUE(last->release_sent) << "resource " << r << " lost its lease "
                                      << last->token;
    }
  }
  std::cerr << history.acks() << " grants acknowledged, " << failed_calls.load()
            << " calls failed after every retry, longest time without a grant: "
            << absl::FormatDuration(history.longest_gap()) << "\n";
}

TEST_F(FailoverTest, KillingOneOfTwoInstancesKeepsTheLeasesItsClientsHold) {
  StartCluster(/*etcd_members=*/1);
  const int survivor = 1 - leader_;
  // The clients' first address is the instance that dies.
  auto client = FailoverClient(cluster_->Target({leader_, survivor}));
  constexpr int kLeases = 4;
  std::vector<std::unique_ptr<client::Lease>> leases;
  std::atomic<int> lost{0};
  for (int i = 0; i < kLeases; ++i) {
    client::AcquireOptions acquire;
    acquire.ttl = Seconds(30);
    client::LeaseOptions options;
    options.on_lost = [&lost](const absl::Status&) { ++lost; };
    auto lease = client->AcquireLease(absl::StrCat("held-", i), absl::StrCat("holder-", i),
                                      acquire, std::move(options));
    ASSERT_THAT(lease, IsOk());
    leases.push_back(*std::move(lease));
  }

  cluster_->Kill(leader_);
  // Each holder renews through the other instance, with its own token.
  for (auto& lease : leases) {
    ASSERT_THAT(PollUntil([&] { return lease->Renew().ok(); }, kFailoverPatience,
                          "a renewal through the other instance"),
                IsOk())
        << "lease " << lease->resource() << " could not be renewed: " << lease->Check();
  }
  auto state = client->Describe("held-0");
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->holder, "holder-0");
  EXPECT_EQ(state->token, leases[0]->token());
  EXPECT_EQ(lost.load(), 0);
  uint64_t max_token = 0;
  for (auto& lease : leases) {
    max_token = std::max(max_token, lease->token());
    EXPECT_THAT(lease->Release(), IsOk()) << lease->resource();
    auto after = client->Describe(lease->resource());
    ASSERT_THAT(after, IsOk());
    EXPECT_FALSE(after->held) << lease->resource();
  }
  EXPECT_EQ(lost.load(), 0);
  auto next = client->Acquire("held-0", "newcomer");
  ASSERT_THAT(next, IsOk());
  EXPECT_TRUE(next->acquired);
  EXPECT_GT(next->token, max_token);
}

TEST_F(FailoverTest, QueuedWaitersKeepTheirOrderAcrossAFailover) {
  StartCluster(/*etcd_members=*/1);
  const int survivor = 1 - leader_;
  InstanceStub leader(cluster_->instance(leader_).address());
  auto held = leader.Acquire("q", "holder", Seconds(60), absl::ZeroDuration());
  ASSERT_THAT(held, IsOk());
  ASSERT_TRUE(held->acquired());

  constexpr int kWaiters = 4;
  absl::Mutex mu;
  std::vector<int> granted_order;
  std::vector<uint64_t> granted_tokens;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      auto client = FailoverClient(cluster_->Target({leader_, survivor}));
      client::AcquireOptions acquire;
      acquire.ttl = Seconds(30);
      acquire.wait = Seconds(60);
      auto granted = client->Acquire("q", absl::StrCat("w", i), acquire);
      if (!granted.ok() || !granted->acquired) {
        ADD_FAILURE() << "waiter " << i << ": " << granted.status();
        return;
      }
      {
        absl::MutexLock lock(&mu);
        granted_order.push_back(i);
        granted_tokens.push_back(granted->token);
      }
      EXPECT_THAT(client->Release("q", granted->token), IsOk());
    });
    // Queued in this order: each parks before the next asks.
    ASSERT_THAT(PollUntil(
                    [&] {
                      auto info = leader.Describe("q", Seconds(5));
                      return info.ok() && info->waiters() == static_cast<uint32_t>(i + 1);
                    },
                    kFailoverPatience, "the waiter to park"),
                IsOk());
  }

  // The leader dies with the queue in its memory; the standby loads it from
  // etcd, and each client's retry takes its place back.
  cluster_->Kill(leader_);
  auto holder = FailoverClient(cluster_->Target({survivor}));
  ASSERT_THAT(PollUntil(
                  [&] {
                    auto info = holder->Describe("q");
                    return info.ok() && info->token == held->token() &&
                           info->waiters == kWaiters;
                  },
                  kFailoverPatience, "the queue to survive the failover"),
              IsOk());
  ASSERT_THAT(holder->Release("q", held->token()), IsOk());
  for (std::thread& t : waiters) t.join();
  EXPECT_THAT(granted_order, ::testing::ElementsAre(0, 1, 2, 3));
  EXPECT_TRUE(std::is_sorted(granted_tokens.begin(), granted_tokens.end()));
}

}  // namespace
}  // namespace fencegate::testing
