// The lock service's side of a token's mode (lockservice/core/lock_requests.h):
// a grant is signed for the mode granted, Renew and Release verify the
// signature for the mode they claim, and a renewal is re-signed for it.
#include <string>

#include "common/base/errors.h"
#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockservice/core/lock_requests.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

TokenSigner MustSigner() {
  absl::StatusOr<KeyRing> keys = KeyRing::Parse("k1 " + std::string(64, 'a') + " sign", "keys");
  EXPECT_THAT(keys, IsOk());
  return TokenSigner(keys.ok() ? *std::move(keys) : KeyRing());
}

TEST(LockRequestsSigningTest, AGrantIsSignedForItsModeAndVerifiedForTheModeClaimed) {
  const TokenSigner signer = MustSigner();
  AcquireResult granted;
  granted.acquired = true;
  granted.token = 42;
  granted.mode = LeaseMode::kShared;
  v1::AcquireResponse response;
  ASSERT_THAT(FillAcquireResponse(&signer, "r", granted, &response), IsOk());
  const v1::TokenSignature& signature = response.signature();
  EXPECT_THAT(signer.Verify("r", 42, LeaseMode::kShared, signature.key_id(), signature.mac()),
              IsOk());

  const LockLimits limits{};
  EXPECT_THAT(CheckTokenSignature(&signer, limits, "r", 42, v1::LEASE_MODE_SHARED, signature),
              IsOk());
  // A shared lease's signature with the claim EXCLUSIVE (the default) or
  // PERMIT is refused: the lease cannot be renewed or released as another
  // kind.
  absl::Status as_exclusive = CheckTokenSignature(&signer, limits, "r", 42,
                                                  v1::LEASE_MODE_EXCLUSIVE, signature);
  EXPECT_THAT(as_exclusive, StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(GetErrorInfo(as_exclusive).value_or(ErrorInfo()).reason,
            ErrorReason::kBadSignature);
  EXPECT_THAT(CheckTokenSignature(&signer, limits, "r", 42, v1::LEASE_MODE_PERMIT, signature),
              StatusIs(absl::StatusCode::kPermissionDenied));

  v1::RenewRequest renew;
  renew.set_resource("r");
  renew.set_token(42);
  *renew.mutable_signature() = signature;
  EXPECT_THAT(RenewArgsFor(renew, &signer, limits, Caller{}).status(),
              StatusIs(absl::StatusCode::kPermissionDenied));
  renew.set_mode(v1::LEASE_MODE_SHARED);
  EXPECT_THAT(RenewArgsFor(renew, &signer, limits, Caller{}).status(), IsOk());
  v1::ReleaseRequest release;
  release.set_resource("r");
  release.set_token(42);
  *release.mutable_signature() = signature;
  release.set_mode(v1::LEASE_MODE_SHARED);
  EXPECT_THAT(ReleaseArgsFor(release, &signer, limits, Caller{}).status(), IsOk());

  // The renewal's new signature is the shared one again.
  v1::RenewResponse renewed;
  FillRenewResponse(&signer, "r", 42, v1::LEASE_MODE_SHARED, RenewResult{}, &renewed);
  EXPECT_EQ(renewed.signature().mac(), signature.mac());
}

TEST(LockRequestsSigningTest, AnExclusiveGrantsSignatureIsTheOneFromBeforeLockKinds) {
  const TokenSigner signer = MustSigner();
  AcquireResult granted;
  granted.acquired = true;
  granted.token = 42;
  v1::AcquireResponse response;
  ASSERT_THAT(FillAcquireResponse(&signer, "orders", granted, &response), IsOk());
  ASSERT_OK_AND_ASSIGN(TokenSignature old, signer.Sign("orders", 42, LeaseMode::kExclusive));
  EXPECT_EQ(response.signature().mac(), old.mac);
  // A request that says no mode is an exclusive lease's, as every old
  // client's is.
  v1::ReleaseRequest release;
  release.set_resource("orders");
  release.set_token(42);
  *release.mutable_signature() = response.signature();
  EXPECT_THAT(ReleaseArgsFor(release, &signer, LockLimits(), Caller{}).status(), IsOk());
}

TEST(LockRequestsSigningTest, AnUnknownModeIsInvalidSignedOrNot) {
  const TokenSigner signer = MustSigner();
  v1::RenewRequest renew;
  renew.set_resource("r");
  renew.set_token(42);
  renew.set_mode(static_cast<v1::LeaseMode>(9));
  for (const TokenSigner* s : {&signer, static_cast<const TokenSigner*>(nullptr)}) {
    absl::Status status = RenewArgsFor(renew, s, LockLimits(), Caller{}).status();
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode is 9")));
    EXPECT_EQ(GetErrorInfo(status).value_or(ErrorInfo()).field, "mode");
  }
}

}  // namespace
}  // namespace fencegate::lockservice
