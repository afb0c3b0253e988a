#include "client/retry.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::client {
namespace {

// `status` with how the retries ended after its message; payloads (the
// ErrorInfo) kept.
absl::Status GaveUp(const absl::Status& status, int attempts, absl::Duration took,
                    absl::string_view why) {
  absl::Status annotated(
      status.code(),
      absl::StrCat(status.message(), " (gave up after ", attempts,
                   attempts == 1 ? " attempt" : " attempts", " in ",
                   absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(1))), ": ",
                   why, ")"));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    annotated.SetPayload(url, payload);
  });
  return annotated;
}

}  // namespace

absl::Time CallDeadline(const ClientOptions& options, absl::Duration attempt,
                        Clock& clock) {
  return clock.Now() + std::max(options.call_timeout, attempt);
}

absl::Duration AttemptTimeout(absl::Time deadline, absl::Duration attempt, Clock& clock) {
  return std::min(attempt, deadline - clock.Now());
}

absl::Status RetryUnavailable(const RetryPolicy& policy, Clock& clock,
                              absl::Time deadline,
                              absl::FunctionRef<absl::Status()> attempt,
                              absl::FunctionRef<void(absl::Duration at_most)> pause) {
  absl::BitGen random;
  const absl::Time start = clock.Now();
  absl::Duration backoff = policy.initial_backoff;
  for (int attempts = 1;; ++attempts) {
    absl::Status status = attempt();
    if (status.code() != absl::StatusCode::kUnavailable) return status;
    if (policy.max_attempts > 0 && attempts >= policy.max_attempts) {
      if (attempts == 1) return status;  // no retries asked for: as the server said
      return GaveUp(status, attempts, clock.Now() - start, "RetryPolicy::max_attempts");
    }
    const absl::Duration left = deadline - clock.Now();
    if (left > absl::ZeroDuration()) {
      // Equal jitter: spreads the retries of many clients out, yet every
      // pause lasts at least half its step, so the attempts of one call
      // span a known time (a reconnecting channel needs some).
      pause(std::min(left, backoff * absl::Uniform(random, 0.5, 1.0)));
    }
    if (clock.Now() >= deadline) {
      return GaveUp(status, attempts, clock.Now() - start, "the call's deadline passed");
    }
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

std::string NewRequestId() {
  absl::BitGen random;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(random),
                         absl::Uniform<uint64_t>(random));
}

}  // namespace fencegate::client
