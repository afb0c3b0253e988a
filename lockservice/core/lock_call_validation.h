// What a valid call to the lock manager is: each call's fields against the
// service's limits (lock_limits.h), checked before anything is decided, so
// that a refused call changes nothing. Each error is INVALID_ARGUMENT and
// names the field and its limit (common/core/validation.h,
// common/base/errors.h); CheckBacklog's is RESOURCE_EXHAUSTED.
//
// Thread safety: plain functions.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_VALIDATION_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_VALIDATION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/lock_limits.h"

namespace fencegate::lockservice {

absl::Status ValidateAcquire(const AcquireArgs& args, const LockLimits& limits);
// `most`: the most resources one call may name (the smaller of
// limits.max_multi_resources and what one decision holds).
absl::Status ValidateAcquireMany(const MultiAcquireArgs& args, const LockLimits& limits,
                                 size_t most);
absl::Status ValidateRenew(const RenewArgs& args, const LockLimits& limits);
absl::Status ValidateRelease(const ReleaseArgs& args, const LockLimits& limits);
absl::Status ValidateProclaim(const ProclaimArgs& args, const LockLimits& limits);
// INVALID_ARGUMENT naming "value" past limits.max_election_value_bytes.
absl::Status ValidateElectionValue(absl::string_view value, const LockLimits& limits);

// RESOURCE_EXHAUSTED when `pending` decisions already wait for the store
// and that is limits.max_pending or more: the call is refused before it is
// decided, and nothing is applied.
absl::Status CheckBacklog(size_t pending, const LockLimits& limits);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_VALIDATION_H_
