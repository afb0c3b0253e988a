#include "common/base/monotonic_wait.h"

#include <algorithm>

namespace fencegate {
namespace {

// The BasicLockable that std::condition_variable_any unlocks while it waits
// (Abseil 20220623's Mutex has no lock()/unlock() of its own).
class Lockable {
 public:
  explicit Lockable(absl::Mutex* mu) : mu_(mu) {}
  void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu_->Lock(); }
  void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu_->Unlock(); }

 private:
  absl::Mutex* const mu_;
};

}  // namespace

bool MonotonicWait::WaitFor(absl::Mutex* mu, const absl::Condition& condition,
                            absl::Duration timeout) {
  if (timeout <= absl::ZeroDuration()) return condition.Eval();
  timeout = std::min(timeout, absl::Hours(24));
  Lockable lockable(mu);
  return cv_.wait_for(lockable, absl::ToChronoNanoseconds(timeout),
                      [&condition] { return condition.Eval(); });
}

}  // namespace fencegate
