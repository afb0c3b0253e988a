#include "common/base/timer_queue.h"

namespace fencegate {

Clock::TimerId TimerQueue::Add(absl::Time deadline,
                               absl::AnyInvocable<void()> fn) {
  Clock::TimerId id = next_id_++;
  timers_.emplace(Key{deadline, id}, std::move(fn));
  deadlines_.emplace(id, deadline);
  return id;
}

void TimerQueue::Cancel(Clock::TimerId id) {
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return;
  timers_.erase(Key{it->second, id});
  deadlines_.erase(it);
}

std::optional<absl::Time> TimerQueue::NextDeadline() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first.first;
}

std::optional<std::pair<absl::Time, absl::AnyInvocable<void()>>>
TimerQueue::PopDue(absl::Time now) {
  if (timers_.empty() || timers_.begin()->first.first > now) return std::nullopt;
  auto node = timers_.extract(timers_.begin());
  deadlines_.erase(node.key().second);
  return std::make_pair(node.key().first, std::move(node.mapped()));
}

}  // namespace fencegate
