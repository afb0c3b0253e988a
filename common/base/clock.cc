// The public include/fencegate/clock.h (RealClock, NewRealClock, SteadyClock)
// is implemented here, in fencegate_base, whose objects the installed client
// library carries (client/CMakeLists.txt).
#include "fencegate/clock.h"

#include <pthread.h>

#include <chrono>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/base/monotonic_wait.h"
#include "common/base/timer_queue.h"

namespace fencegate {
namespace {

class RealClock final : public Clock {
 public:
  RealClock() = default;

  ~RealClock() override {
    std::thread thread;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      thread.swap(thread_);
    }
    wake_.Notify();
    if (thread.joinable()) thread.join();
  }

  absl::Time Now() override {
    // steady_clock's epoch is arbitrary; absl::Time is only a carrier here.
    return absl::UnixEpoch() +
           absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }

  TimerId RunAt(absl::Time deadline, absl::AnyInvocable<void()> fn) override {
    absl::MutexLock lock(&mu_);
    if (!thread_.joinable()) {
      thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "fg-timer");
        Loop();
      });
    }
    const std::optional<absl::Time> next = timers_.NextDeadline();
    TimerId id = timers_.Add(deadline, std::move(fn));
    // Only a new earliest deadline shortens the loop's sleep: every grant
    // arms a timer, and most are later than one already armed.
    if (!next || deadline < *next) wake_.Notify();
    return id;
  }

  void Cancel(TimerId id) override {
    absl::MutexLock lock(&mu_);
    timers_.Cancel(id);
  }

 private:
  void Loop() {
    absl::MutexLock lock(&mu_);
    while (!stopping_) {
      auto due = timers_.PopDue(Now());
      if (due) {
        mu_.Unlock();
        due->second();
        mu_.Lock();
        continue;
      }
      // Sleep until the next deadline, or until a new earlier timer or stop.
      std::optional<absl::Time> next = timers_.NextDeadline();
      auto changed = [this, next]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || timers_.NextDeadline() != next;
      };
      absl::Duration wait = next ? *next - Now() : absl::Seconds(1);
      wake_.WaitFor(&mu_, absl::Condition(&changed), wait);
    }
  }

  absl::Mutex mu_;
  MonotonicWait wake_;  // a new timer, or stopping
  TimerQueue timers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // joined by the destructor
};

}  // namespace

std::unique_ptr<Clock> NewRealClock() { return std::make_unique<RealClock>(); }

Clock& SteadyClock() {
  static Clock* clock = new RealClock();
  return *clock;
}

}  // namespace fencegate
