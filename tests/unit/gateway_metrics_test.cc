// What the gateway's core counts (gateway/store_metrics.h,
// gateway/stale_refusals.h), on a real SQLite backend: every answer by RPC
// and result, stale refusals by resource class and in the recent ring,
// fence raises by source, commits and their batch sizes, refusals by the
// fence cache.
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/metrics/registry.h"
#include "gateway/fenced_store.h"
#include "gateway/sqlite_storage.h"
#include "gateway/stale_refusals.h"
#include "gateway/store_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"

namespace fencegate::gateway {
namespace {

using ::testing::HasSubstr;

class GatewayMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto storage = SqliteStorage::Open(dir_.File("gw.db"), 1);
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
    refusals_ = std::make_unique<StaleRefusals>(registry_, /*capacity=*/2);
    metrics_ = StoreMetrics::Register(registry_, refusals_.get(), /*count_raises=*/true);
    store_ = std::make_unique<FencedStore>(storage_.get(), GatewayLimits(), nullptr,
                                           &metrics_);
  }

  absl::Status Write(const std::string& resource, uint64_t token) {
    WriteArgs args;
    args.resource = resource;
    args.token = token;
    Mutation m;
    m.key = "k";
    m.kind = Mutation::Kind::kPut;
    m.value = "v";
    args.mutations.push_back(m);
    absl::Notification done;
    absl::Status status;
    store_->Write(std::move(args), [&](absl::StatusOr<WriteResult> r) {
      status = r.status();
      done.Notify();
    });
    done.WaitForNotification();
    return status;
  }

  absl::Status RaiseFromFeed(const std::string& resource, uint64_t position) {
    absl::Notification done;
    absl::Status status;
    store_->RaiseFence(resource, position, [&](absl::StatusOr<FenceResult> r) {
      status = r.status();
      done.Notify();
    });
    done.WaitForNotification();
    return status;
  }

  uint64_t Requests(StoreMetrics::Rpc rpc, StoreMetrics::Result result) {
    return metrics_.requests[rpc][result]->Value();
  }

  testing::TempDir dir_;
  metrics::Registry registry_;
  std::unique_ptr<SqliteStorage> storage_;
  std::unique_ptr<StaleRefusals> refusals_;
  StoreMetrics metrics_;
  std::unique_ptr<FencedStore> store_;
};

TEST_F(GatewayMetricsTest, CountsAnswersRefusalsAndRaises) {
  ASSERT_TRUE(Write("orders/1", 5).ok());
  ASSERT_TRUE(Write("orders/1", 5).ok());   // the same holder again: no raise
  EXPECT_FALSE(Write("orders/1", 3).ok());  // stale
  EXPECT_FALSE(Write("plain", 0).ok());     // token 0: invalid argument
  ASSERT_TRUE(RaiseFromFeed("orders/1", 9).ok());
  ASSERT_TRUE(RaiseFromFeed("orders/1", 7).ok());  // already past: not a raise

  EXPECT_EQ(Requests(StoreMetrics::kWrite, StoreMetrics::kOk), 2u);
  EXPECT_EQ(Requests(StoreMetrics::kWrite, StoreMetrics::kStaleToken), 1u);
  EXPECT_EQ(Requests(StoreMetrics::kWrite, StoreMetrics::kInvalidArgument), 1u);
  // The feed's raises are not client requests.
  EXPECT_EQ(Requests(StoreMetrics::kFence, StoreMetrics::kOk), 0u);
  EXPECT_EQ(metrics_.fence_raises[StoreMetrics::kFromWrite]->Value(), 1u);
  EXPECT_EQ(metrics_.fence_raises[StoreMetrics::kFromFeed]->Value(), 1u);

  const std::string text = registry_.Render();
  EXPECT_THAT(
      text,
      HasSubstr(
          "fencegate_gateway_stale_refused_total{rpc=\"write\",class=\"orders\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fencegate_gateway_stale_refused_total{rpc=\"write\",class="
                              "\"unclassified\"} 0\n"));
  // Token 3 and the raise to 7 are below a fence the cache knows: refused
  // (and answered) without a commit; only the client's refusal is counted.
  EXPECT_THAT(text, HasSubstr("fencegate_gateway_commit_batch_size_count 3\n"));
  EXPECT_THAT(text, HasSubstr("fencegate_gateway_stale_refused_in_memory_total 1\n"));

  std::vector<StaleRefusals::Refusal> recent = refusals_->Recent();
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0].resource, "orders/1");
  EXPECT_EQ(recent[0].token, 3u);
  EXPECT_EQ(recent[0].fence, 5u);
  EXPECT_EQ(recent[0].rpc, StaleRefusals::kWrite);
}

TEST_F(GatewayMetricsTest, StaleRefusalsKeepTheNewestWithinCapacity) {
  ASSERT_TRUE(Write("a/x", 10).ok());
  for (uint64_t token : {1, 2, 3}) EXPECT_FALSE(Write("a/x", token).ok());
  std::vector<StaleRefusals::Refusal> recent = refusals_->Recent();
  ASSERT_EQ(recent.size(), 2u);  // capacity 2, newest first
  EXPECT_EQ(recent[0].token, 3u);
  EXPECT_EQ(recent[1].token, 2u);
}

TEST(StaleRefusalsTest, ResourceClassesAreBounded) {
  EXPECT_EQ(StaleRefusals::ClassOf("orders/1234"), "orders");
  EXPECT_EQ(StaleRefusals::ClassOf("no-slash"), "unclassified");
  EXPECT_EQ(StaleRefusals::ClassOf("/leading"), "other");
  EXPECT_EQ(StaleRefusals::ClassOf("we ird/1"), "other");
  EXPECT_EQ(StaleRefusals::ClassOf(std::string(33, 'a') + "/1"), "other");
  metrics::Registry registry;
  StaleRefusals refusals(registry, 4, /*max_classes=*/3);
  for (int i = 0; i < 10; ++i) {
    refusals.Record(StaleRefusals::kWrite, absl::StrCat("c", i, "/r"), 1, 2, absl::Now());
  }
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("{rpc=\"write\",class=\"c2\"} 1\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("class=\"c3\"")));
  EXPECT_THAT(text, HasSubstr("{rpc=\"write\",class=\"other\"} 7\n"));
}

}  // namespace
}  // namespace fencegate::gateway
