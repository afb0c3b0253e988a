#include "tests/testing/fake_clock.h"

namespace fencegate::testing {

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

Clock::TimerId FakeClock::RunAt(absl::Time deadline, absl::AnyInvocable<void()> fn) {
  absl::MutexLock lock(&mu_);
  return timers_.Add(deadline, std::move(fn));
}

void FakeClock::Cancel(TimerId id) {
  absl::MutexLock lock(&mu_);
  timers_.Cancel(id);
}

void FakeClock::AdvanceBy(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  const absl::Time target = now_ + d;
  while (auto due = timers_.PopDue(target)) {
    if (due->first > now_) now_ = due->first;
    mu_.Unlock();
    due->second();
    mu_.Lock();
  }
  now_ = target;
}

size_t FakeClock::PendingTimers() {
  absl::MutexLock lock(&mu_);
  return timers_.size();
}

std::optional<absl::Time> FakeClock::NextDeadline() {
  absl::MutexLock lock(&mu_);
  return timers_.NextDeadline();
}

}  // namespace fencegate::testing
