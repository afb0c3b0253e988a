// Reply<T>: one reply of a core's callback API (LockManager, FencedStore),
// filled by the callback on whatever thread it runs and read by the test.
// It also owns bytes a request's string_views point at (Keep()), so they
// live until the reply has arrived.
//
// Thread safety: Set() and the readers may run on different threads.
#ifndef FENCEGATE_TESTS_TESTING_REPLY_H_
#define FENCEGATE_TESTS_TESTING_REPLY_H_

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace fencegate::testing {

template <typename T>
class Reply {
 public:
  // Copies `s` into the reply and returns a view of the copy. Call before
  // the request is made; the views stay valid as long as the reply lives.
  absl::string_view Keep(absl::string_view s) {
    kept_.emplace_back(s);
    return kept_.back();
  }
  void Set(absl::StatusOr<T> result) {
    absl::MutexLock lock(&mu_);
    result_ = std::move(result);
    arrived_.Notify();
  }
  bool arrived() const { return arrived_.HasBeenNotified(); }
  // The reply if it has arrived; INTERNAL "no reply yet" otherwise.
  absl::StatusOr<T> Get() {
    absl::MutexLock lock(&mu_);
    if (!result_) return absl::InternalError("no reply yet");
    return *result_;
  }
  // Waits for the reply; a safety net, not a timing assumption.
  absl::StatusOr<T> Wait() {
    if (!arrived_.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("no reply within 60s");
    }
    return Get();
  }

 private:
  std::deque<std::string> kept_;
  absl::Notification arrived_;
  absl::Mutex mu_;
  std::optional<absl::StatusOr<T>> result_ ABSL_GUARDED_BY(mu_);
};

template <typename T>
using ReplyPtr = std::shared_ptr<Reply<T>>;

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_REPLY_H_
