// GroupCommitQueue: many threads submit items; one thread at a time takes
// all items queued so far as one batch and hands them to `flush`, which
// makes the whole batch durable in one transaction and then completes each
// item. So one fsync acknowledges many requests, and each reply still waits
// for the commit of its own batch. Batches are flushed one at a time, in
// submission order.
//
// Adaptive batches. A batch starts when the queue holds max_batch items
// (full), or when no more items are on their way: a caller that has
// received requests and is about to submit them (parsing, validating,
// deciding) holds a CommitArrival while it does, and while one is held no
// batch that is not full starts. So requests that reach the server together
// commit together, without a fixed pause: an idle server commits a lone
// request at once, and nothing waits for requests that have not arrived. A
// batch waits only for the Arrivals held when its first item was queued
// (or, behind a flush, when that flush ended), never for later ones, so a
// steady stream of overlapping Arrivals cannot hold it back. An Arrival
// must only cover work that does not wait for a commit (it would wait for
// itself).
//
// Who flushes (run to completion). The queue's own writer thread flushes a
// batch made ready by a Submit() or by an Arrival that simply ends. An
// Arrival ended with FlushHere() instead flushes the batch it made ready on
// the thread that ends it, and then every batch that is ready when that
// flush is done: a server thread that handled a message commits what the
// message completed, and sends the replies itself, without waking the
// writer thread and without a hand-off. Whoever flushes, one flush runs at
// a time, in order.
//
// Groups. SubmitGroup() queues items that must commit together (one
// decision's rows: a lease's end and the fence mark it draws). A batch is
// never cut inside a group: it may exceed max_batch by less than one group,
// and a group larger than max_batch is a batch of its own.
//
// Thread safety: Submit(), SubmitGroup() and Arriving() may be called from
// any thread, also while holding the caller's own locks (they only take the
// queue's internal mutex briefly), and so may an Arrival's destructor.
// FlushHere() may run `flush`: call it with no lock held that `flush` or
// the callbacks it runs take. `flush` runs with no lock of the queue held.
#ifndef FENCEGATE_COMMON_CORE_GROUP_COMMIT_H_
#define FENCEGATE_COMMON_CORE_GROUP_COMMIT_H_

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace fencegate {

class CommitArrival;

// The part of GroupCommitQueue that does not depend on its items: the
// mutex, and the Arrivals held, by epoch. A new Arrival belongs to epoch_,
// which moves on each time a batch starts waiting; held_[i] counts those of
// epoch first_epoch_ + i (empty: none held; first_epoch_ means nothing).
class GroupCommitQueueBase {
 public:
  // Announces items on their way; see CommitArrival.
  CommitArrival Arriving();

 protected:
  GroupCommitQueueBase() = default;
  ~GroupCommitQueueBase() = default;

  // The queued items from now on wait for the Arrivals held now.
  void StartWaiting() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { wait_through_ = epoch_++; }
  // Whether every Arrival the queued items wait for has ended.
  bool ArrivedAll() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return held_.empty() || first_epoch_ > wait_through_;
  }
  // Flushes, on the calling thread, every batch that is ready (FlushHere()).
  virtual void FlushReadyHereLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;

  absl::Mutex mu_;

 private:
  friend class CommitArrival;

  void EndArrival(uint64_t epoch, bool flush_here);

  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t first_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<int> held_ ABSL_GUARDED_BY(mu_);
  // The queued items wait for the Arrivals of this epoch and earlier ones.
  uint64_t wait_through_ ABSL_GUARDED_BY(mu_) = 0;
};

// Holds a queue's batches back from starting while not full, from
// construction to its end (see the header): its destructor, or FlushHere().
// Movable; a moved-from CommitArrival holds nothing.
class CommitArrival {
 public:
  CommitArrival(CommitArrival&& other) noexcept
      : queue_(std::exchange(other.queue_, nullptr)), epoch_(other.epoch_) {}
  CommitArrival& operator=(CommitArrival&&) = delete;
  CommitArrival(const CommitArrival&) = delete;
  ~CommitArrival() {
    if (queue_ != nullptr) queue_->EndArrival(epoch_, /*flush_here=*/false);
  }

  // Ends the Arrival. If that makes a batch ready while no flush runs, the
  // calling thread flushes it, and then every batch ready when that flush
  // is done, before returning (see the header). Replies the flush sends
  // wait for a ReplyBatch open on this thread (common/core/reply_batch.h), so
  // call it with none open. Nothing if moved from.
  void FlushHere() && {
    if (queue_ != nullptr) std::exchange(queue_, nullptr)->EndArrival(epoch_, true);
  }

 private:
  friend class GroupCommitQueueBase;
  CommitArrival(GroupCommitQueueBase* queue, uint64_t epoch) : queue_(queue), epoch_(epoch) {}
  GroupCommitQueueBase* queue_;
  uint64_t epoch_;
};

inline CommitArrival GroupCommitQueueBase::Arriving() {
  absl::MutexLock lock(&mu_);
  if (held_.empty()) first_epoch_ = epoch_;
  while (first_epoch_ + held_.size() <= epoch_) held_.push_back(0);
  ++held_[epoch_ - first_epoch_];
  return CommitArrival(this, epoch_);
}

inline void GroupCommitQueueBase::EndArrival(uint64_t epoch, bool flush_here) {
  absl::MutexLock lock(&mu_);
  --held_[epoch - first_epoch_];
  while (!held_.empty() && held_.front() == 0) {
    held_.pop_front();
    ++first_epoch_;
  }
  if (flush_here) FlushReadyHereLocked();
}

template <typename Item>
class GroupCommitQueue final : public GroupCommitQueueBase {
 public:
  using FlushFn = absl::AnyInvocable<void(std::vector<Item>& batch)>;

  // `max_batch` bounds how many items one flush receives (but see Groups
  // in the header: a group is never cut). `thread_name`
  // (at most 15 characters) names the writer thread in ps, top and perf.
  GroupCommitQueue(FlushFn flush, size_t max_batch, const char* thread_name = "fg-commit")
      : flush_(std::move(flush)), max_batch_(max_batch) {
    thread_ = std::thread([this, thread_name] {
      pthread_setname_np(pthread_self(), thread_name);
      Loop();
    });
  }

  // Flushes everything submitted so far, then stops the writer thread.
  // REQUIRES: no CommitArrival of this queue is still held, and no
  // FlushHere() is running.
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
    const bool first = queue_.empty();
    queue_.push_back(std::move(item));
    groups_.push_back(1);
    QueuedLocked(first);
  }

  // Queues `items` as one group, which no batch cuts, and empties `items`
  // (keeping its capacity for the caller's next group). Nothing if empty.
  void SubmitGroup(std::vector<Item>& items) {
    if (items.empty()) return;
    absl::MutexLock lock(&mu_);
    const bool first = queue_.empty();
    queue_.insert(queue_.end(), std::make_move_iterator(items.begin()),
                  std::make_move_iterator(items.end()));
    groups_.push_back(items.size());
    QueuedLocked(first);
    items.clear();
  }

  // Whether items are queued that wait for Arrivals to end (for tests).
  bool WaitingForArrivals() {
    absl::MutexLock lock(&mu_);
    return !queue_.empty() && !flushing_ && !ArrivedAll();
  }

  // Items submitted but not yet handed to `flush` (for overload checks).
  size_t Pending() {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }
  // The same in groups (a Submit() is a group of one). Lock-free: callers
  // check it on every request; it may lag a concurrent submit or batch.
  size_t PendingGroups() const { return pending_groups_.load(std::memory_order_relaxed); }

 private:
  // After items were queued; `first`: the queue was empty before.
  void QueuedLocked(bool first) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    pending_groups_.store(groups_.size(), std::memory_order_relaxed);
    // A new batch waits for the Arrivals held now; behind a flush, for
    // those held when the flush ends.
    if (first && !flushing_) StartWaiting();
  }

  void Loop() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(this, &GroupCommitQueue::WriterHasWork));
      if (!ReadyLocked()) return;  // stopping, and everything is flushed
      FlushReadyHereLocked();
    }
  }

  void FlushReadyHereLocked() override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!ReadyLocked()) return;
    // The last flush's vector: batches and queue_ trade buffers, so the
    // queue keeps its capacity.
    std::vector<Item> batch = std::move(spare_);
    while (ReadyLocked()) {
      TakeBatchLocked(batch);
      flushing_ = true;
      mu_.Unlock();
      flush_(batch);
      batch.clear();
      mu_.Lock();
      flushing_ = false;
      if (!queue_.empty()) StartWaiting();
    }
    spare_ = std::move(batch);
  }

  // Moves the next batch from the queue into `batch`.
  void TakeBatchLocked(std::vector<Item>& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (queue_.size() <= max_batch_) {
      batch.swap(queue_);
      groups_.clear();
    } else {
      // Whole groups, at least one, up to max_batch items.
      size_t take = 0;
      while (!groups_.empty() && (take == 0 || take + groups_.front() <= max_batch_)) {
        take += groups_.front();
        groups_.pop_front();
      }
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.begin() + take));
      queue_.erase(queue_.begin(), queue_.begin() + take);
    }
    pending_groups_.store(groups_.size(), std::memory_order_relaxed);
  }

  // A batch is ready when no flush runs and it is full, or the Arrivals it
  // waits for have all ended. Stopping flushes what is queued at once.
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !flushing_ && !queue_.empty() &&
           (stopping_ || ArrivedAll() || queue_.size() >= max_batch_);
  }
  // The writer wakes for a ready batch, or to stop once nothing is left.
  bool WriterHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ReadyLocked() || (stopping_ && !flushing_ && queue_.empty());
  }

  FlushFn flush_;
  const size_t max_batch_;
  std::vector<Item> queue_ ABSL_GUARDED_BY(mu_);
  // The buffer of the last batch, emptied, for the next one (only the
  // flushing thread takes it).
  std::vector<Item> spare_ ABSL_GUARDED_BY(mu_);
  // The sizes of the groups in queue_, in order (a Submit() is a group of 1).
  std::deque<size_t> groups_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> pending_groups_{0};  // groups_.size(), for PendingGroups()
  bool flushing_ ABSL_GUARDED_BY(mu_) = false;  // a flush runs, on some thread
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_GROUP_COMMIT_H_
