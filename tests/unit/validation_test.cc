#include "common/core/validation.h"

#include "common/base/errors.h"
#include "fencegate/v1/lock.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ValidationTest, NameMessagesSayFieldLimitAndValue) {
  EXPECT_THAT(ValidateName("holder", std::string(11, 'h'), 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("holder"), HasSubstr("11 bytes"),
                             HasSubstr("limit is 10"))));
  EXPECT_THAT(ValidateName("holder", "", 10),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(ValidateName("holder", "tab\there", 10),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("control")));
  EXPECT_THAT(ValidateName("holder", "ok-name/é", 20), IsOk());
  EXPECT_THAT(ValidateName("holder", "日本語 🔒", 20), IsOk());
  EXPECT_THAT(ValidateOptionalName("request_id", "", 20), IsOk());
}

TEST(ValidationTest, InvalidUtf8IsRefusedWithItsOffset) {
  const std::string cases[] = {
      std::string("ab\xff"),          // never valid in UTF-8
      std::string("ab\xc3"),          // truncated sequence
      std::string("ab\xc0\xaf"),      // overlong "/"
      std::string("ab\xed\xa0\x80"),  // UTF-16 surrogate
      std::string("ab\xf4\x90\x80\x80"),  // past U+10FFFF
  };
  for (const std::string& bad : cases) {
    EXPECT_THAT(ValidateName("resource", bad, 64),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("resource"), HasSubstr("UTF-8"),
                               HasSubstr("offset 2"))));
  }
}

TEST(ValidationTest, DurationMessageQuotesBoundsInMs) {
  EXPECT_THAT(ValidateDuration("ttl_ms", absl::Milliseconds(5), absl::Milliseconds(100),
                               absl::Seconds(3)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("ttl_ms is 5"), HasSubstr("between 100 and 3000"))));
}

TEST(ValidationTest, DurationErrorCarriesTheFieldAndItsUpperBoundInMs) {
  absl::Status s = ValidateDuration("wait_ms", absl::Minutes(5), absl::ZeroDuration(),
                                    absl::Seconds(60));
  ASSERT_TRUE(GetErrorInfo(s).has_value()) << s;
  EXPECT_EQ(GetErrorInfo(s)->field, "wait_ms");
  EXPECT_EQ(GetErrorInfo(s)->max_value, 60000u);
  // And through the wire form the Session stream answers with.
  v1::RpcStatus wire;
  ToRpcStatus(s, &wire);
  EXPECT_EQ(GetErrorInfo(FromRpcStatus(wire))->max_value, 60000u);
}

TEST(ValidationTest, UnknownFieldsAreRefused) {
  fencegate::v1::AcquireRequest request;
  request.set_resource("r");
  request.GetReflection()->MutableUnknownFields(&request)->AddVarint(99, 1);
  absl::Status s = RejectUnknownFields(request);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("99")));
  EXPECT_EQ(GetErrorInfo(s)->reason, ErrorReason::kInvalidField);

  fencegate::v1::AcquireRequest clean;
  clean.set_resource("r");
  EXPECT_THAT(RejectUnknownFields(clean), IsOk());
}

}  // namespace
}  // namespace fencegate
