// gMock matchers for absl::Status and absl::StatusOr (Abseil 20220623 has
// none): EXPECT_THAT(s, IsOk()); EXPECT_THAT(s, StatusIs(kAborted));
// EXPECT_THAT(s, StatusIs(kInvalidArgument, HasSubstr("ttl_ms")));
// ASSERT_OK_AND_ASSIGN(auto v, FunctionReturningStatusOr());
#ifndef FENCEGATE_TESTS_TESTING_STATUS_MATCHERS_H_
#define FENCEGATE_TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace fencegate::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

MATCHER_P(StatusIs, code, "has status code " + ::testing::PrintToString(code)) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code;
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has status code " + ::testing::PrintToString(code)) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::Matches(message_matcher)(std::string(s.message()));
}

#define FG_CONCAT_INNER(a, b) a##b
#define FG_CONCAT(a, b) FG_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                        \
  auto FG_CONCAT(status_or_, __LINE__) = (expr);               \
  ASSERT_TRUE(FG_CONCAT(status_or_, __LINE__).ok())            \
      << FG_CONCAT(status_or_, __LINE__).status();             \
  lhs = *std::move(FG_CONCAT(status_or_, __LINE__))

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_STATUS_MATCHERS_H_
