#include "client/retry.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace fencegate::client {

absl::Status RetryUnavailable(const RetryPolicy& policy, absl::Time deadline,
                              absl::FunctionRef<absl::Status()> attempt) {
  absl::BitGen random;
  absl::Duration backoff = policy.initial_backoff;
  absl::Status status;
  for (int i = 1;; ++i) {
    status = attempt();
    if (status.code() != absl::StatusCode::kUnavailable || i >= policy.max_attempts) {
      return status;
    }
    // Full jitter: spread retries of many clients out.
    absl::Duration pause = backoff * absl::Uniform(random, 0.0, 1.0);
    if (absl::Now() + pause >= deadline) return status;
    absl::SleepFor(pause);
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

std::string NewRequestId() {
  absl::BitGen random;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(random),
                         absl::Uniform<uint64_t>(random));
}

}  // namespace fencegate::client
