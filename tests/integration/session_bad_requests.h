// The gateway's bad requests (bad_requests.h) sent over the Session stream
// instead of their unary call: each case's bytes become the request of one
// GatewayCall, byte for byte (so bytes that do not parse stay bytes that do
// not parse), and its answer on the stream must be what docs/errors.md
// documents for the unary call: same code, ErrorDetail and words.
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

// Whether `c` is a request the stream carries (Write, MultiWrite, Read,
// Fence) and can reach the server in a stream message: not the messages
// over gRPC's receive limit, which end the whole stream (tested apart).
bool OnTheStream(const BadRequest& c);

// A GatewayCall with `request_id` whose request is `c.bytes`, as raw bytes.
// REQUIRES: OnTheStream(c).
std::string CallOf(const BadRequest& c, uint64_t request_id);
// A GatewaySessionRequest carrying `calls` (each from CallOf), as bytes.
std::string MessageOf(const std::vector<std::string>& calls);

// Every answer in `messages` (GatewaySessionResponse bytes), by request id,
// as the unary call's reply would have been: the status (with its
// ErrorDetail in the trailer's form) or the response's bytes. INTERNAL if a
// message does not parse or an id is answered twice.
absl::StatusOr<std::map<uint64_t, testing::RawReply>> AnswersOf(
    const std::vector<std::string>& messages);

}  // namespace fencegate::conformance

#endif  // FENCEGATE_TESTS_INTEGRATION_SESSION_BAD_REQUESTS_H_
