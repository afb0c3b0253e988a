// Input checks for the gateway's requests. Each returns OK or
// INVALID_ARGUMENT whose message names the field, the limit and what was
// received, and whose ErrorInfo (common/base/errors.h) carries the field name
// ("resource", "token", "mutation.value", "mutations[2].key", ...).
//
// Thread safety: pure functions; safe from any thread.
#ifndef FENCEGATE_GATEWAY_REQUEST_VALIDATION_H_
#define FENCEGATE_GATEWAY_REQUEST_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gateway/gateway_limits.h"
#include "gateway/requests.h"

namespace fencegate::gateway {

// The largest token the gateway accepts: tokens are stored as SQLite
// INTEGERs (int64). The lock service starts at 1 and counts up by one.
inline constexpr uint64_t kMaxToken = 0x7fffffffffffffffULL;

absl::Status ValidateResource(absl::string_view resource,
                              const GatewayLimits& limits);
// A fencing token: 1..kMaxToken.
absl::Status ValidateFencingToken(uint64_t token);

// Write, MultiWrite and Fence need an EXCLUSIVE lease's token (mode 0): a
// SHARED or PERMIT token, or a mode this server does not know, is refused
// naming "mode".
absl::Status ValidateWrite(const WriteArgs& args, const GatewayLimits& limits);
// token 0 (a plain read) is valid here, with mode 0 only. A fenced read
// takes an EXCLUSIVE or a SHARED lease's token, never a PERMIT's.
absl::Status ValidateRead(const ReadArgs& args, const GatewayLimits& limits);
absl::Status ValidateFence(const FenceArgs& args, const GatewayLimits& limits);
absl::Status ValidateList(const ListArgs& args, const GatewayLimits& limits);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_REQUEST_VALIDATION_H_
