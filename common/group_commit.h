// GroupCommitQueue: many threads submit items; one writer thread takes all
// items queued so far as one batch and hands them to `flush`, which makes the
// whole batch durable in one transaction and then completes each item. So
// one fsync acknowledges many requests, and each reply still waits for the
// commit of its own batch. Batches are flushed one at a time, in submission
// order.
//
// Thread safety: Submit() may be called from any thread, also while holding
// the caller's own locks (it only takes the queue's internal mutex briefly).
// `flush` runs on the writer thread with no lock of the queue held.
#ifndef FENCEGATE_COMMON_GROUP_COMMIT_H_
#define FENCEGATE_COMMON_GROUP_COMMIT_H_

#include <pthread.h>

#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace fencegate {

template <typename Item>
class GroupCommitQueue {
 public:
  using FlushFn = absl::AnyInvocable<void(std::vector<Item>& batch)>;

  // `max_batch` bounds how many items one flush receives. `thread_name`
  // (at most 15 characters) names the writer thread in ps, top and perf.
  GroupCommitQueue(FlushFn flush, size_t max_batch, const char* thread_name = "fg-commit")
      : flush_(std::move(flush)), max_batch_(max_batch) {
    thread_ = std::thread([this, thread_name] {
      pthread_setname_np(pthread_self(), thread_name);
      Loop();
    });
  }

  // Flushes everything submitted so far, then stops the writer thread.
  ~GroupCommitQueue() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }

  GroupCommitQueue(const GroupCommitQueue&) = delete;
  GroupCommitQueue& operator=(const GroupCommitQueue&) = delete;

  void Submit(Item item) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(item));
  }

  // Items submitted but not yet handed to `flush` (for overload checks).
  size_t Pending() {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }

 private:
  void Loop() {
    std::vector<Item> batch;
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &GroupCommitQueue::HasWorkOrStopping));
        if (queue_.empty()) return;  // stopping, and everything is flushed
        if (queue_.size() <= max_batch_) {
          batch.swap(queue_);
        } else {
          batch.assign(std::make_move_iterator(queue_.begin()),
                       std::make_move_iterator(queue_.begin() + max_batch_));
          queue_.erase(queue_.begin(), queue_.begin() + max_batch_);
        }
      }
      flush_(batch);
      batch.clear();
    }
  }

  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  }

  FlushFn flush_;
  const size_t max_batch_;
  absl::Mutex mu_;
  std::vector<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_GROUP_COMMIT_H_
