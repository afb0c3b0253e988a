// The client library's one retry loop, and the deadlines of a call and of
// its attempts (the contract is in client_options.h). Times are on a
// monotonic Clock (SteadyClock() in the clients, a FakeClock in tests), so
// a wall-clock jump neither stretches nor cuts a call's retries.
//
// Thread safety: thread-safe (no state).
#ifndef FENCEGATE_CLIENT_RETRY_H_
#define FENCEGATE_CLIENT_RETRY_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fencegate/client/client_options.h"
#include "fencegate/clock.h"

namespace fencegate::client {

// When a call starting now on `clock` ends: options.call_timeout from now,
// or `attempt` from now (one whole attempt) if that is longer.
absl::Time CallDeadline(const ClientOptions& options, absl::Duration attempt,
                        Clock& clock);

// How long an attempt starting now may take: `attempt`, cut at the call's
// `deadline`. Zero or less once the deadline has passed.
absl::Duration AttemptTimeout(absl::Time deadline, absl::Duration attempt, Clock& clock);

// Calls `attempt` until it returns anything but UNAVAILABLE, the policy's
// max_attempts (if not 0) have been made, or `deadline` (on `clock`) has
// passed. Between attempts it calls `pause(at_most)` with a jittered
// exponential backoff (between half and all of initial_backoff,
// 2 * initial_backoff, ... up to max_backoff), never past the deadline;
// `pause` may return early when retrying sooner is sensible (the channel
// that failed has connected again). No attempt starts at or after the
// deadline. Returns the last attempt's status; an UNAVAILABLE given up on
// says, after its message, how many attempts were made over how long.
absl::Status RetryUnavailable(const RetryPolicy& policy, Clock& clock,
                              absl::Time deadline,
                              absl::FunctionRef<absl::Status()> attempt,
                              absl::FunctionRef<void(absl::Duration at_most)> pause);

// A random 128-bit id in hex, for request_id: retries of one logical call
// reuse it, so the server applies the call once.
std::string NewRequestId();

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_RETRY_H_
