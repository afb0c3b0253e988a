// TimerQueue: the deadline -> callback table both clocks share. It only
// stores and hands out due entries; whoever owns it decides when "due" is.
//
// Thread safety: not thread-safe; the owning clock guards it with its mutex.
#ifndef FENCEGATE_COMMON_BASE_TIMER_QUEUE_H_
#define FENCEGATE_COMMON_BASE_TIMER_QUEUE_H_

#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"

namespace fencegate {

class TimerQueue {
 public:
  Clock::TimerId Add(absl::Time deadline, absl::AnyInvocable<void()> fn);
  void Cancel(Clock::TimerId id);

  size_t size() const { return timers_.size(); }

  // The earliest deadline, or nullopt when empty.
  std::optional<absl::Time> NextDeadline() const;

  // Removes and returns the earliest entry if its deadline is <= `now`.
  std::optional<std::pair<absl::Time, absl::AnyInvocable<void()>>> PopDue(
      absl::Time now);

 private:
  using Key = std::pair<absl::Time, Clock::TimerId>;  // id breaks ties FIFO
  std::map<Key, absl::AnyInvocable<void()>> timers_;
  absl::flat_hash_map<Clock::TimerId, absl::Time> deadlines_;
  Clock::TimerId next_id_ = 1;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_BASE_TIMER_QUEUE_H_
