// AwaitFenceFeed: after a run with grant-time fencing (every fault healed,
// the workers done, before the last crash, whose restart would make the
// gateways replay the whole feed), gives a gateway time to apply every
// fence position the lock service committed, and returns what it holds,
// for the checker to hold the gateways to every grant (history_checker.h,
// grant-time-fence-reaches-gateways).
//
// The positions come from the lock service itself: a WatchFences stream of
// the harness's own from position 0, read until it has caught up (the
// latest position of every resource). Then the gateway's fence of each of
// those resources (Describe) is polled until it is at least that position,
// or `timeout` passes: the fence as last read is returned either way. A
// gateway that never catches up is the checker's to report.
//
// Thread safety: a free function; blocks until done or `timeout` passes.
#ifndef FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_
#define FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/torture/history.h"

namespace fencegate::torture {

// Every resource with a position, and its fence at the gateway `gateway`;
// an error only if the lock service's positions could not be read.
// `lock_target`: the lock service, as a gRPC target.
absl::StatusOr<std::map<std::string, FeedFence>> AwaitFenceFeed(
    const std::string& lock_target, const std::string& gateway, absl::Duration timeout);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_
