// LockManager's answers to bad input (lock_manager_fixture.h), on each
// store: every refusal names the field and its limit, and a certified
// caller may renew and release only its own lease.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/lock_manager_fixture.h"

namespace fencegate::lockservice {
namespace {

class LockManagerInputTest : public LockManagerTest {};

// ---------------------------------------------------------------- bad input

struct BadAcquire {
  std::string name;
  AcquireArgs args;
  std::string field;
};

TEST_P(LockManagerInputTest, BadAcquireInputNamesTheField) {
  const std::string big(300, 'x');
  const absl::Duration ttl = Seconds(10);
  const absl::Duration wait = absl::ZeroDuration();
  std::vector<BadAcquire> cases = {
      {"empty resource", Args("", "h", ttl, wait), "resource"},
      {"long resource", Args(big, "h", ttl, wait), "resource"},
      {"control char", Args("a\nb", "h", ttl, wait), "resource"},
      {"empty holder", Args("r", "", ttl, wait), "holder"},
      {"long holder", Args("r", big, ttl, wait), "holder"},
      {"zero ttl", Args("r", "h", absl::ZeroDuration(), wait), "ttl_ms"},
      {"negative ttl", Args("r", "h", Seconds(-1), wait), "ttl_ms"},
      {"tiny ttl", Args("r", "h", Milliseconds(1), wait), "ttl_ms"},
      {"huge ttl", Args("r", "h", absl::Hours(24 * 365 * 1000), wait), "ttl_ms"},
      {"negative wait", Args("r", "h", ttl, Milliseconds(-5)), "wait_ms"},
      {"huge wait", Args("r", "h", ttl, absl::Hours(1000)), "wait_ms"},
      {"long request id", Args("r", "h", ttl, wait, big), "request_id"},
  };
  for (const BadAcquire& c : cases) {
    absl::StatusOr<AcquireResult> r = Acquire(c.args);
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.name;
    std::optional<ErrorInfo> info = GetErrorInfo(r.status());
    ASSERT_TRUE(info.has_value()) << c.name;
    EXPECT_EQ(info->field, c.field) << c.name;
  }
  EXPECT_FALSE(Describe("r").held);  // nothing was granted on the way
}

TEST_P(LockManagerInputTest, BadRenewReleaseDescribeInputNamesTheField) {
  uint64_t token = MustAcquire("r", "h");
  EXPECT_THAT(Renew("r", 0, Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token")));
  EXPECT_THAT(Renew("", token, Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  EXPECT_THAT(Renew("r", token, Seconds(-1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl_ms")));
  EXPECT_THAT(Renew("r", token, absl::Hours(100)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl_ms")));
  EXPECT_THAT(Release("r", 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token")));
  EXPECT_THAT(Release(std::string(1000, 'r'), token),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  EXPECT_THAT(Release("r", token, std::string(200, 'q')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request_id")));
  auto slot = std::make_shared<Slot<ResourceInfo>>();
  manager_->Describe("", [slot](absl::StatusOr<ResourceInfo> r) { slot->Set(r); });
  EXPECT_THAT(slot->get(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  // None of it touched the lease.
  EXPECT_EQ(Describe("r").hold_count, 1u);
  EXPECT_EQ(Describe("r").remaining, Seconds(10));
}

TEST_P(LockManagerInputTest, CertifiedCallerMayRenewAndReleaseOnlyItsOwnLease) {
  // Over mutual TLS the holder is "<certificate subject>/<name>".
  uint64_t token = MustAcquire("r", "CN=alice/worker-1");
  auto renew_as = [&](const std::string& caller) {
    auto slot = std::make_shared<Slot<RenewResult>>();
    manager_->Renew(RenewArgs{"r", token, Seconds(10), caller},
                    [slot](absl::StatusOr<RenewResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  };
  auto release_as = [&](const std::string& caller) {
    auto slot = std::make_shared<Slot<ReleaseResult>>();
    manager_->Release(ReleaseArgs{"r", token, "", caller},
                      [slot](absl::StatusOr<ReleaseResult> r) { slot->Set(std::move(r)); });
    manager_->Sync();
    return slot->get();
  };
  EXPECT_THAT(renew_as("CN=mallory"), StatusIs(absl::StatusCode::kPermissionDenied,
                                               HasSubstr("belongs to 'CN=alice/worker-1'")));
  EXPECT_THAT(release_as("CN=ali"), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(Describe("r").token, token);  // untouched
  EXPECT_THAT(renew_as("CN=alice"), IsOk());
  EXPECT_THAT(release_as("CN=alice"), IsOk());
  EXPECT_FALSE(Describe("r").held);
  EXPECT_TRUE(HeldBy("CN=a", "CN=a"));
  EXPECT_FALSE(HeldBy("CN=ab/x", "CN=a"));
}


// ------------------------------------------------------------------ bounds

TEST_P(LockManagerInputTest, ABacklogPastMaxPendingIsRefusedAndChangesNothing) {
  limits_.max_pending = 2;
  Restart();
  absl::Notification entered, proceed;
  faulty_->HoldNextCommit(&entered, &proceed);
  auto first = StartAcquire(Args("a", "h"));  // its batch is at the store, held
  entered.WaitForNotification();
  auto second = StartAcquire(Args("b", "h"));  // decided, waiting: 1
  auto third = StartAcquire(Args("c", "h"));   // 2: the limit
  auto refused = StartAcquire(Args("d", "h"));
  ASSERT_TRUE(refused->done());  // at once, before any commit
  EXPECT_THAT(refused->get(), StatusIs(absl::StatusCode::kResourceExhausted,
                                       HasSubstr("--max_pending")));
  proceed.Notify();
  manager_->Sync();
  for (auto* granted : {&first, &second, &third}) {
    ASSERT_TRUE((*granted)->done());
    ASSERT_THAT((*granted)->get(), IsOk());
    EXPECT_TRUE((*granted)->get()->acquired);
  }
  EXPECT_FALSE(Describe("d").held);  // the refused call applied nothing
  ASSERT_THAT(Acquire(Args("d", "h")), IsOk());  // the backlog is gone
  EXPECT_TRUE(Describe("d").held);
}

INSTANTIATE_TEST_SUITE_P(Stores, LockManagerInputTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
