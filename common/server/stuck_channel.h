// StuckChannelWatch: tells when a gRPC channel has stopped reconnecting,
// so that its owner replaces it with a fresh one.
//
// Why: gRPC 1.51 (Debian 12), built on Abseil 20220623, schedules a
// subchannel's reconnection on a timer thread that sleeps until an absolute
// CLOCK_REALTIME deadline (Abseil's CondVar waits with FUTEX_CLOCK_REALTIME).
// When the wall clock steps back while that thread sleeps (NTP correcting a
// clock that ran ahead, a VM restored from a snapshot), the wait is
// stretched by the step, and every timer behind it fires that much later:
// a channel whose server went away stays in TRANSIENT_FAILURE for as long
// as the step, hours for a clock that was hours ahead, although the server
// is back. A fresh channel with subchannels of its own (UseOwnSubchannels)
// connects at its first call; only its own later retries wait for timers.
// docs/torture-results.md ("What it found") has the measurement.
//
// Stuck(): the channel was in TRANSIENT_FAILURE at every sample for longer
// than `stuck_after`, on the monotonic clock. A channel that merely
// reconnects slowly may be replaced too; that costs one new connection.
//
// Thread safety: not thread-safe; the owner serializes calls.
#ifndef FENCEGATE_COMMON_SERVER_STUCK_CHANNEL_H_
#define FENCEGATE_COMMON_SERVER_STUCK_CHANNEL_H_

#include <chrono>
#include <optional>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate {

// Past the reconnect backoffs fencegate's channels use (at most a few
// seconds) and a connection attempt's timeout.
inline constexpr absl::Duration kChannelStuckAfter = absl::Seconds(5);

class StuckChannelWatch {
 public:
  explicit StuckChannelWatch(absl::Duration stuck_after = kChannelStuckAfter)
      : stuck_after_(absl::ToChronoNanoseconds(stuck_after)) {}

  // Samples `channel`'s state (without making it connect). True once it has
  // been in TRANSIENT_FAILURE at every sample for longer than stuck_after;
  // the owner then replaces the channel and calls Reset().
  bool Stuck(grpc::Channel& channel);
  void Reset() { failing_since_.reset(); }

 private:
  const std::chrono::nanoseconds stuck_after_;
  std::optional<std::chrono::steady_clock::time_point> failing_since_;
};

// For a channel that may be replaced: subchannels of its own, not from
// gRPC's global pool (which would hand the replacement the stuck ones).
void UseOwnSubchannels(grpc::ChannelArguments& args);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_STUCK_CHANNEL_H_
