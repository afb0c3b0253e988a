// CommitBursts: a group commit (common/core/group_commit.h) driven by a
// completion-queue loop's bursts (completion_queue_loop.h), the way Redis
// writes and fsyncs once per turn of its event loop. While a burst runs it
// holds one CommitArrival, so the calls its messages queue wait for each
// other; when the burst ends it ends the Arrival with FlushHere(): the
// loop's thread commits them all in one transaction and sends their
// answers, and no other thread is woken for it. A lone call is committed
// at the end of its own burst, without waiting for anything.
//
// Ownership: the queue `arriving` announces to must outlive the hooks, or
// Stop() must have returned before it goes.
// Thread safety: Begin(), End() and HeldOpen() on the loop's thread; Stop()
// on any.
#ifndef FENCEGATE_COMMON_SERVER_COMMIT_BURSTS_H_
#define FENCEGATE_COMMON_SERVER_COMMIT_BURSTS_H_

#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "common/core/group_commit.h"
#include "common/server/completion_queue_loop.h"

namespace fencegate {

class CommitBursts final : public BurstHooks {
 public:
  // `arriving` is the queue's Arriving() (or its owner's).
  explicit CommitBursts(absl::AnyInvocable<CommitArrival()> arriving)
      : arriving_(std::move(arriving)) {}

  void Begin() override {
    absl::MutexLock lock(&mu_);
    if (!stopped_) burst_.emplace(arriving_());
  }
  void End() override {
    std::optional<CommitArrival> burst;
    {
      absl::MutexLock lock(&mu_);
      if (burst_) burst.emplace(std::move(*burst_));
      burst_.reset();
      flushing_ = burst.has_value();
    }
    if (!burst) return;
    std::move(*burst).FlushHere();
    absl::MutexLock lock(&mu_);
    flushing_ = false;
  }

  // Test builds: a burst is held open while `held` says so
  // (BurstHooks::HeldOpen). Call before the loop starts.
  void HoldOpenWhile(absl::AnyInvocable<bool()> held) { held_ = std::move(held); }
  bool HeldOpen() override { return held_ != nullptr && held_(); }

  // From now on bursts hold no Arrival and the queue is not touched; waits
  // for the burst under way, if any, to have committed. For a shutdown: the
  // queue may go once it returns, while the loop still runs (to deliver
  // the answers the queue's last commit sends).
  void Stop() {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    mu_.Await(absl::Condition(
        +[](CommitBursts* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
          return !self->burst_.has_value() && !self->flushing_;
        },
        this));
  }

 private:
  absl::AnyInvocable<CommitArrival()> arriving_;
  absl::AnyInvocable<bool()> held_;  // loop's thread only
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<CommitArrival> burst_ ABSL_GUARDED_BY(mu_);
  bool flushing_ ABSL_GUARDED_BY(mu_) = false;  // End() commits, unlocked
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_COMMIT_BURSTS_H_
