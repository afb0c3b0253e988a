#include "harness/poll.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fencegate::testing {

absl::Status PollUntil(absl::FunctionRef<bool()> done, absl::Duration timeout,
                       absl::string_view what, absl::Duration interval) {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    if (done()) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "still waiting after ", absl::FormatDuration(timeout), ": ", what));
    }
    absl::SleepFor(interval);  // poll interval, under the deadline
  }
}

}  // namespace fencegate::testing
