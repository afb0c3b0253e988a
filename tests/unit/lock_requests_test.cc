// lock_requests.h: an Acquire's kind of lease (mode, permits) from its
// proto into AcquireArgs, and a resource's kind from ResourceInfo into
// DescribeResponse; the unary calls and the Session stream share these.
#include "lockservice/core/lock_requests.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "fencegate/v1/lock.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

v1::AcquireRequest Request(int mode, uint32_t permits) {
  v1::AcquireRequest request;
  request.set_resource("r");
  request.set_holder("alice");
  request.set_ttl_ms(10000);
  request.set_wait_ms(2000);
  request.set_request_id("id-1");
  request.set_mode(static_cast<v1::LeaseMode>(mode));
  request.set_permits(permits);
  return request;
}

TEST(LockRequestsTest, AcquireCarriesEachModeAndItsPermits) {
  struct Case {
    int proto;
    LeaseMode mode;
    uint32_t permits;
  };
  for (const Case& c : {Case{v1::LEASE_MODE_EXCLUSIVE, LeaseMode::kExclusive, 0},
                        Case{v1::LEASE_MODE_SHARED, LeaseMode::kShared, 0},
                        Case{v1::LEASE_MODE_PERMIT, LeaseMode::kPermit, 3},
                        Case{v1::LEASE_MODE_PERMIT, LeaseMode::kPermit, 10000}}) {
    ASSERT_OK_AND_ASSIGN(AcquireArgs args,
                         AcquireArgsFromProto(Request(c.proto, c.permits)));
    EXPECT_EQ(args.mode, c.mode) << "proto mode " << c.proto;
    EXPECT_EQ(args.permits, c.permits) << "proto mode " << c.proto;
    // The rest as before.
    EXPECT_EQ(args.resource, "r");
    EXPECT_EQ(args.holder, "alice");
    EXPECT_EQ(args.ttl, absl::Seconds(10));
    EXPECT_EQ(args.wait, absl::Seconds(2));
    EXPECT_EQ(args.request_id, "id-1");
  }
}

TEST(LockRequestsTest, AnAcquireWithoutAModeIsExclusive) {
  v1::AcquireRequest request;
  request.set_resource("r");
  ASSERT_OK_AND_ASSIGN(AcquireArgs args, AcquireArgsFromProto(request));
  EXPECT_EQ(args.mode, LeaseMode::kExclusive);
  EXPECT_EQ(args.permits, 0u);
}

// Ranges are the manager's to refuse (it knows --max_holders_per_resource
// and how the resource is used): they pass as they came.
TEST(LockRequestsTest, PermitsPassUncheckedForTheManagerToRefuse) {
  for (uint32_t permits : {0u, 1u, 10001u, 4294967295u}) {
    for (int mode :
         {v1::LEASE_MODE_EXCLUSIVE, v1::LEASE_MODE_SHARED, v1::LEASE_MODE_PERMIT}) {
      ASSERT_OK_AND_ASSIGN(AcquireArgs args,
                           AcquireArgsFromProto(Request(mode, permits)));
      EXPECT_EQ(args.permits, permits);
    }
  }
}

TEST(LockRequestsTest, AModeThatIsNoLeaseModeIsInvalidArgumentNamingMode) {
  for (int mode : {3, 4, 255, 256, 1 << 20, -1, -2147483647 - 1, 2147483647}) {
    absl::StatusOr<AcquireArgs> args = AcquireArgsFromProto(Request(mode, 0));
    EXPECT_THAT(args, StatusIs(absl::StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("mode"), HasSubstr(absl::StrCat(mode)),
                                     HasSubstr("LEASE_MODE_SHARED"))))
        << mode;
    std::optional<ErrorInfo> info = GetErrorInfo(args.status());
    ASSERT_TRUE(info.has_value()) << mode;
    EXPECT_EQ(info->field, "mode");
    // The same from the path every call takes, with or without mutual TLS.
    for (const Caller& caller : {Caller{}, Caller{true, "CN=svc"}}) {
      EXPECT_THAT(AcquireArgsFor(Request(mode, 0), nullptr, caller),
                  StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode")));
    }
  }
}

TEST(LockRequestsTest, UnderMutualTlsTheHolderIsTheSubjectAndTheModeStays) {
  ASSERT_OK_AND_ASSIGN(AcquireArgs args, AcquireArgsFor(Request(v1::LEASE_MODE_PERMIT, 4),
                                                        nullptr, Caller{true, "CN=svc"}));
  EXPECT_EQ(args.holder, "CN=svc/alice");
  EXPECT_EQ(args.mode, LeaseMode::kPermit);
  EXPECT_EQ(args.permits, 4u);
}

TEST(LockRequestsTest, AGrantSaysItsKindAndARefusalNone) {
  for (LeaseMode mode : {LeaseMode::kExclusive, LeaseMode::kShared, LeaseMode::kPermit}) {
    AcquireResult granted;
    granted.acquired = true;
    granted.token = 9;
    granted.mode = mode;
    v1::AcquireResponse response;
    ASSERT_THAT(FillAcquireResponse(nullptr, "r", granted, &response), IsOk());
    EXPECT_EQ(static_cast<int>(response.mode()), static_cast<int>(mode));
    EXPECT_EQ(response.token(), 9u);
  }
  AcquireResult refused;
  refused.reason = NotAcquiredReason::kHeld;
  refused.holder_token = 4;
  refused.mode = LeaseMode::kShared;  // not a lease: not said
  v1::AcquireResponse response;
  ASSERT_THAT(FillAcquireResponse(nullptr, "r", refused, &response), IsOk());
  EXPECT_FALSE(response.acquired());
  EXPECT_EQ(response.mode(), v1::LEASE_MODE_EXCLUSIVE);
  EXPECT_EQ(response.holder_token(), 4u);
}

TEST(LockRequestsTest, DescribeSaysHowTheResourceIsUsed) {
  struct Case {
    LeaseMode mode;
    v1::LeaseMode proto;
    uint32_t permits;
    uint32_t holders;
  };
  for (const Case& c : {Case{LeaseMode::kExclusive, v1::LEASE_MODE_EXCLUSIVE, 0, 0},
                        Case{LeaseMode::kExclusive, v1::LEASE_MODE_EXCLUSIVE, 0, 1},
                        Case{LeaseMode::kShared, v1::LEASE_MODE_SHARED, 0, 7},
                        Case{LeaseMode::kPermit, v1::LEASE_MODE_PERMIT, 5, 2}}) {
    ResourceInfo info;
    info.held = c.holders > 0;
    info.holder = "oldest";
    info.token = 42;
    info.remaining = absl::Seconds(3);
    info.hold_count = 1;
    info.waiters = 4;
    info.mode = c.mode;
    info.permits = c.permits;
    info.holders = c.holders;
    v1::DescribeResponse response;
    FillDescribeResponse(info, &response);
    EXPECT_EQ(response.mode(), c.proto);
    EXPECT_EQ(response.permits(), c.permits);
    EXPECT_EQ(response.holders(), c.holders);
    EXPECT_EQ(response.held(), c.holders > 0);
    EXPECT_EQ(response.holder(), "oldest");
    EXPECT_EQ(response.token(), 42u);
    EXPECT_EQ(response.remaining_ms(), 3000);
    EXPECT_EQ(response.waiters(), 4u);
  }
}

}  // namespace
}  // namespace fencegate::lockservice
