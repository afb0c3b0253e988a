// What the LockManager counts (lockservice/core/lock_metrics.h), on SQLite and
// a FakeClock: grants by kind, refusals by reason, releases, expiries,
// renewals, lost leases, the wait-time histogram, commits, and the gauges'
// figures; and the status page's listing (TopResources).
#include "lockservice/core/lock_metrics.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/metrics/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "tests/testing/fake_clock.h"

namespace fencegate::lockservice {
namespace {

using absl::Seconds;

class LockMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteLockStore::Open(dir_.File("locks.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    metrics_ = LockManagerMetrics::Register(registry_);
    LockLimits limits;
    limits.lock_delay = Seconds(1);
    auto manager = LockManager::Create(store_.get(), &clock_, limits, nullptr, &metrics_);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
  }

  // Starts an Acquire; its answer is in *result after Sync().
  void StartAcquire(const std::string& resource, const std::string& holder,
                    absl::Duration wait, std::optional<AcquireResult>* result) {
    manager_->Acquire(manager_->NewCallId(),
                      AcquireArgs{resource, holder, Seconds(10), wait, ""},
                      [result](absl::StatusOr<AcquireResult> r) {
                        if (r.ok()) *result = *r;
                      });
  }
  AcquireResult Acquire(const std::string& resource, const std::string& holder) {
    std::optional<AcquireResult> result;
    StartAcquire(resource, holder, absl::ZeroDuration(), &result);
    manager_->Sync();
    EXPECT_TRUE(result.has_value());
    return result.value_or(AcquireResult());
  }
  absl::Status Renew(const std::string& resource, uint64_t token) {
    absl::Status status = absl::InternalError("no answer");
    manager_->Renew(RenewArgs{resource, token, Seconds(10), ""},
                    [&status](absl::StatusOr<RenewResult> r) { status = r.status(); });
    manager_->Sync();
    return status;
  }
  absl::Status Release(const std::string& resource, uint64_t token) {
    absl::Status status = absl::InternalError("no answer");
    manager_->Release(
        ReleaseArgs{resource, token, "", ""},
        [&status](absl::StatusOr<ReleaseResult> r) { status = r.status(); });
    manager_->Sync();
    return status;
  }
  uint64_t Grants(LockManagerMetrics::GrantKind kind) {
    return metrics_.grants[kind]->Value();
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  metrics::Registry registry_;
  LockManagerMetrics metrics_;
  std::unique_ptr<SqliteLockStore> store_;
  std::unique_ptr<LockManager> manager_;
};

TEST_F(LockMetricsTest, CountsWhereTheManagerDecides) {
  const uint64_t t1 = Acquire("r", "a").token;
  ASSERT_GT(t1, 0u);
  Acquire("r", "a");                         // reentrant
  EXPECT_FALSE(Acquire("r", "b").acquired);  // held
  std::optional<AcquireResult> waited;
  StartAcquire("r", "c", Seconds(30), &waited);
  manager_->Sync();
  EXPECT_EQ(manager_->Figures().waiters, 1u);
  EXPECT_EQ(manager_->Figures().leases_held, 1u);

  clock_.AdvanceBy(Seconds(3));
  ASSERT_TRUE(Renew("r", t1).ok());
  ASSERT_TRUE(Release("r", t1).ok());  // one hold of two
  ASSERT_TRUE(Release("r", t1).ok());  // the lease ends; c is granted
  manager_->Sync();
  ASSERT_TRUE(waited.has_value());
  ASSERT_TRUE(waited->acquired);
  EXPECT_EQ(Renew("r", t1).code(), absl::StatusCode::kAborted);  // lease lost

  // c's lease (granted at +3 s) expires at +13 s; its 1 s lock-delay runs.
  clock_.AdvanceBy(absl::Milliseconds(10500));
  manager_->Sync();
  EXPECT_FALSE(Acquire("r", "d").acquired);  // in lock-delay

  EXPECT_EQ(Grants(LockManagerMetrics::kImmediate), 1u);
  EXPECT_EQ(Grants(LockManagerMetrics::kReentrant), 1u);
  EXPECT_EQ(Grants(LockManagerMetrics::kWaited), 1u);
  EXPECT_EQ(metrics_.not_granted[LockManagerMetrics::kHeld]->Value(), 1u);
  EXPECT_EQ(metrics_.not_granted[LockManagerMetrics::kLockDelay]->Value(), 1u);
  EXPECT_EQ(metrics_.releases->Value(), 1u);
  EXPECT_EQ(metrics_.expirations->Value(), 1u);
  EXPECT_EQ(metrics_.renewals->Value(), 1u);
  EXPECT_EQ(metrics_.lease_lost[LockManagerMetrics::kRenew]->Value(), 1u);
  // c waited 3 s on the fake clock: the 5 s bucket, not the 2.5 s one.
  metrics::Histogram::Snapshot wait = metrics_.wait_seconds->Read();
  EXPECT_EQ(wait.count, 1u);
  EXPECT_DOUBLE_EQ(wait.sum, 3);
  EXPECT_GT(metrics_.commit_batch_size->Read().count, 0u);
  EXPECT_EQ(metrics_.commit_seconds->Read().count,
            metrics_.commit_batch_size->Read().count);

  LockStateFigures figures = manager_->Figures();
  EXPECT_EQ(figures.leases_held, 0u);
  EXPECT_EQ(figures.waiters, 0u);
  EXPECT_GE(figures.last_token, t1 + 2);  // c's token and its expiry mark
}

TEST_F(LockMetricsTest, AWaitThatRunsOutIsCountedAsSuch) {
  Acquire("r", "a");
  std::optional<AcquireResult> waited;
  StartAcquire("r", "b", Seconds(2), &waited);
  clock_.AdvanceBy(Seconds(2));
  manager_->Sync();
  ASSERT_TRUE(waited.has_value());
  EXPECT_FALSE(waited->acquired);
  EXPECT_EQ(metrics_.not_granted[LockManagerMetrics::kWaitTimeout]->Value(), 1u);
  EXPECT_EQ(metrics_.wait_seconds->Read().count, 0u);
}

TEST_F(LockMetricsTest, TopResourcesListsTheMostWaitedOnFirstWithinThePrefix) {
  Acquire("jobs/a", "h1");
  Acquire("jobs/b", "h2");
  Acquire("other", "h3");
  std::optional<AcquireResult> w1, w2, w3;
  StartAcquire("jobs/b", "x", Seconds(30), &w1);
  StartAcquire("jobs/b", "y", Seconds(30), &w2);
  StartAcquire("other", "z", Seconds(30), &w3);
  manager_->Sync();
  std::vector<ResourceSummary> top = manager_->TopResources("jobs/", 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].resource, "jobs/b");
  EXPECT_EQ(top[0].info.waiters, 2u);
  EXPECT_EQ(top[0].info.holder, "h2");
  EXPECT_EQ(top[1].resource, "jobs/a");
  EXPECT_EQ(top[1].info.remaining, Seconds(10));
  top = manager_->TopResources("", 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].resource, "jobs/b");
}

TEST(LockMetricsOffTest, AManagerWithoutMetricsCountsNothingAndWorks) {
  testing::TempDir dir;
  testing::FakeClock clock;
  auto store = SqliteLockStore::Open(dir.File("locks.db"));
  ASSERT_TRUE(store.ok());
  auto manager = LockManager::Create(store->get(), &clock, LockLimits());
  ASSERT_TRUE(manager.ok());
  std::optional<AcquireResult> result;
  (*manager)->Acquire((*manager)->NewCallId(), AcquireArgs{"r", "a", Seconds(5), {}, ""},
                      [&result](absl::StatusOr<AcquireResult> r) { result = *r; });
  (*manager)->Sync();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->acquired);
  EXPECT_EQ((*manager)->Figures().leases_held, 1u);
}

}  // namespace
}  // namespace fencegate::lockservice
