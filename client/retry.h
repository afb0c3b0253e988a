// RetryUnavailable: the client library's one retry loop. Thread-safe (it
// keeps no state).
#ifndef FENCEGATE_CLIENT_RETRY_H_
#define FENCEGATE_CLIENT_RETRY_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/client_options.h"

namespace fencegate::client {

// Calls `attempt` until it returns anything but UNAVAILABLE, the policy's
// attempts run out, or the next try would start after `deadline`. In
// between it calls `pause(until)` with a jittered exponential backoff
// (between half and all of 50 ms, 100 ms, ... up to the policy's maximum);
// `pause` returns by `until`, earlier only if retrying sooner is sensible
// (the connection that failed is back). Returns the last status.
absl::Status RetryUnavailable(const RetryPolicy& policy, absl::Time deadline,
                              absl::FunctionRef<absl::Status()> attempt,
                              absl::FunctionRef<void(absl::Time until)> pause);

// A random 128-bit id in hex, for request_id: retries of one logical call
// reuse it, so the server applies the call once.
std::string NewRequestId();

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_RETRY_H_
