// InfoOf(): the ErrorInfo a status carries (common/base/errors.h), or an
// empty one (reason kUnspecified) when it carries none, for tests that
// check a refusal's reason, field or current token.
//
// Thread safety: a pure function.
#ifndef FENCEGATE_TESTS_TESTING_ERROR_INFO_H_
#define FENCEGATE_TESTS_TESTING_ERROR_INFO_H_

#include "absl/status/status.h"
#include "common/base/errors.h"

namespace fencegate::testing {

inline ErrorInfo InfoOf(const absl::Status& status) {
  return GetErrorInfo(status).value_or(ErrorInfo());
}

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_ERROR_INFO_H_
