// PollUntil: how tests wait for something another process does. Calls
// `done` every `interval` until it returns true, or fails with
// DEADLINE_EXCEEDED naming `what` once `timeout` has passed. Never a fixed
// sleep: the deadline is only the limit of patience on a loaded machine.
//
// Thread safety: free function.
#ifndef FENCEGATE_HARNESS_POLL_H_
#define FENCEGATE_HARNESS_POLL_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate::testing {

absl::Status PollUntil(absl::FunctionRef<bool()> done, absl::Duration timeout,
                       absl::string_view what,
                       absl::Duration interval = absl::Milliseconds(20));

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_POLL_H_
