#include "client/retry.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace fencegate::client {

absl::Status RetryUnavailable(const RetryPolicy& policy, absl::Time deadline,
                              absl::FunctionRef<absl::Status()> attempt,
                              absl::FunctionRef<void(absl::Time until)> pause) {
  absl::BitGen random;
  absl::Duration backoff = policy.initial_backoff;
  absl::Status status;
  for (int i = 1;; ++i) {
    status = attempt();
    if (status.code() != absl::StatusCode::kUnavailable || i >= policy.max_attempts) {
      return status;
    }
    // Equal jitter: spreads the retries of many clients out, yet every
    // pause lasts at least half its step, so the attempts of one call span
    // a known time (a reconnecting channel needs some).
    const absl::Time until = absl::Now() + backoff * absl::Uniform(random, 0.5, 1.0);
    if (until >= deadline) return status;
    pause(until);
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

std::string NewRequestId() {
  absl::BitGen random;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(random),
                         absl::Uniform<uint64_t>(random));
}

}  // namespace fencegate::client
