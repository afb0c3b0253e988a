// The lock service's Session stream messages (lock.proto: LockSessionRequest,
// LockSessionResponse) built and read by tests: calls with their request
// ids, a message's bytes, and what a response message carries. For the
// unit harness (tests/unit/lock_session_harness.h) and the tests that speak
// to real servers.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_TESTS_TESTING_LOCK_SESSION_CALLS_H_
#define FENCEGATE_TESTS_TESTING_LOCK_SESSION_CALLS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/v1/lock.pb.h"

namespace fencegate::testing {

fencegate::v1::LockCall AcquireCall(uint64_t request_id, const std::string& resource,
                                    const std::string& holder, absl::Duration ttl,
                                    absl::Duration wait = absl::ZeroDuration(),
                                    const std::string& idempotency_key = "");
fencegate::v1::LockCall RenewCall(uint64_t request_id, const std::string& resource,
                                  uint64_t token, absl::Duration ttl);
fencegate::v1::LockCall ReleaseCall(uint64_t request_id, const std::string& resource,
                                    uint64_t token);
fencegate::v1::LockCall DescribeCall(uint64_t request_id, const std::string& resource);

// The bytes of a LockSessionRequest carrying `calls` in order.
std::string EncodeLockCalls(const std::vector<fencegate::v1::LockCall>& calls);
// A LockSessionResponse; INTERNAL if it does not parse.
absl::StatusOr<fencegate::v1::LockSessionResponse> DecodeLockResponse(
    const std::string& bytes);
// A result's status: OK for a response, else its code, message and detail.
absl::Status StatusOf(const fencegate::v1::LockResult& result);

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_LOCK_SESSION_CALLS_H_
