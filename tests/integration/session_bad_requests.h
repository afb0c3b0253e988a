// Both services' bad requests (bad_requests.h) sent over their Session
// streams instead of their unary calls: each case's bytes become the
// request of one GatewayCall or LockCall, byte for byte (so bytes that do
// not parse stay bytes that do not parse), and its answer on the stream
// must be what docs/errors.md documents for the unary call: same code,
// ErrorDetail and words.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_TESTS_INTEGRATION_SESSION_BAD_REQUESTS_H_
#define FENCEGATE_TESTS_INTEGRATION_SESSION_BAD_REQUESTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/integration/bad_requests.h"
#include "tests/testing/raw_call.h"

namespace fencegate::conformance {

inline const std::string kSessionMethod = "/fencegate.v1.Gateway/Session";
inline const std::string kLockSessionMethod = "/fencegate.v1.LockService/Session";

// Whether `c` is a request a stream carries (the gateway's Write,
// MultiWrite, Read, Fence; the lock service's Acquire, Renew, Release,
// Describe, Campaign, Proclaim, Leader, Resign) and can reach the server in a stream
// message: not the messages over gRPC's receive limit, which end the whole stream (tested
// apart).
bool OnTheStream(const BadRequest& c);

// A GatewayCall or LockCall (by c.method's service) with `request_id` whose
// request is `c.bytes`, as raw bytes. REQUIRES: OnTheStream(c).
std::string CallOf(const BadRequest& c, uint64_t request_id);
// A GatewaySessionRequest or LockSessionRequest carrying `calls` (each from
// CallOf), as bytes: both are `repeated calls = 1`.
std::string MessageOf(const std::vector<std::string>& calls);

// Every answer in `messages` (GatewaySessionResponse bytes), by request id,
// as the unary call's reply would have been: the status (with its
// ErrorDetail in the trailer's form) or the response's bytes. INTERNAL if a
// message does not parse or an id is answered twice.
absl::StatusOr<std::map<uint64_t, testing::RawReply>> AnswersOf(
    const std::vector<std::string>& messages);
// The same for LockSessionResponse bytes. A message that pushes a
// LeaseLost is INTERNAL too: bad requests acquire nothing.
absl::StatusOr<std::map<uint64_t, testing::RawReply>> LockAnswersOf(
    const std::vector<std::string>& messages);

}  // namespace fencegate::conformance

#endif  // FENCEGATE_TESTS_INTEGRATION_SESSION_BAD_REQUESTS_H_
