// StreamQuota: how many streams of one kind a server holds open at once, and
// the most it may: --max_sessions (the Session streams of either server) and
// --max_fence_watchers (the lock service's WatchFences streams). Each open
// stream costs the server memory (its buffers, its bookkeeping, gRPC's), so
// a server that took every stream it was offered would run out of memory
// before it refused one; with the quota it refuses new streams first.
//
// A stream is counted from Take() until its Give(), which comes once it has
// ended. A Take() while `max` are counted is refused with RESOURCE_EXHAUSTED
// whose message names the streams, the flag and the limit, and counts
// nothing: the caller ends that stream at once with the status.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_COMMON_CORE_STREAM_QUOTA_H_
#define FENCEGATE_COMMON_CORE_STREAM_QUOTA_H_

#include <atomic>
#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace fencegate {

class StreamQuota {
 public:
  // `streams` names what is counted ("Session streams"), `flag` the flag
  // that sets `max` ("--max_sessions"), `advice` what a refused client can
  // do; all three go into the refusal's message. REQUIRES: max >= 1 (the
  // servers' option checks refuse 0).
  StreamQuota(size_t max, std::string streams, std::string flag, std::string advice);
  StreamQuota(const StreamQuota&) = delete;
  StreamQuota& operator=(const StreamQuota&) = delete;

  // Counts one more open stream; RESOURCE_EXHAUSTED (nothing counted) if
  // `max` are open.
  absl::Status Take();
  // A stream that Take() counted has ended. REQUIRES: open() > 0.
  void Give();

  size_t open() const { return open_.load(std::memory_order_relaxed); }
  size_t max() const { return max_; }

 private:
  const size_t max_;
  const std::string streams_;
  const std::string flag_;
  const std::string advice_;
  std::atomic<size_t> open_{0};
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STREAM_QUOTA_H_
