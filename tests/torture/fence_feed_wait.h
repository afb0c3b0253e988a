// AwaitFenceFeed: before the final reads of a run with grant-time fencing,
// waits until a gateway has applied every fence position the lock service
// committed, so the checker can hold the gateways to every grant
// (history_checker.h, grant-time-fence-reaches-gateways).
//
// The positions come from the lock service itself: a WatchFences stream of
// the harness's own from position 0, read until it has caught up (the
// latest position of every resource). Then the gateway's fence of each of
// those resources (Describe) is polled until it is at least that position.
//
// Thread safety: a free function; blocks until done or `timeout` passes.
#ifndef FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_
#define FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fencegate::torture {

// OK once the gateway at `gateway` holds every position; DEADLINE_EXCEEDED
// naming a resource it is behind on (or the stream that failed) otherwise.
// `lock_target`: the lock service, as a gRPC target.
absl::Status AwaitFenceFeed(const std::string& lock_target, const std::string& gateway,
                            absl::Duration timeout);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FENCE_FEED_WAIT_H_
