#include "lockservice/server/election_watch.h"

#include <atomic>
#include <deque>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/grpc_status.h"
#include "lockservice/core/election_requests.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ObserveWriter = grpc::ServerWriteReactor<v1::ObserveResponse>;

// The stream's state and logic, shared by the reactor and the manager.
class ObserveStream final : public ElectionObserver {
 public:
  ObserveStream(ObserveWriter* reactor, uint64_t after_term, uint64_t after_seq,
                const ElectionWatchLimits& limits)
      : reactor_(reactor),
        limits_(limits),
        seen_term_(after_term),
        seen_seq_(after_seq) {}

  void Ref() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() override {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // ElectionObserver (the commit thread).
  void OnChange(const ElectionChange& change) override {
    {
      absl::MutexLock lock(&mu_);
      if (finish_requested_ || !NewToObserver(change, seen_term_, seen_seq_)) return;
      seen_term_ = change.term;
      seen_seq_ = change.seq;
      pending_.push_back(change);
      if (pending_.size() > limits_.max_pending) {
        RequestFinish(grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("the observer fell ", pending_.size(),
                         " changes behind; observe again from the last change seen")));
      }
    }
    Pump();
  }
  void OnStopped(const absl::Status& why) override { End(ToGrpcStatus(why)); }

  // From the reactor's reactions.
  void WriteDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) RequestFinish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
    }
    Pump();
  }
  void End(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      RequestFinish(std::move(status));
    }
    Pump();
  }

 private:
  // As FenceWatch's: decides under the lock, acts outside it; whoever sets
  // `writing_` owns the write, and Finish() waits until none is owned.
  void Pump() {
    bool finish = false;
    {
      absl::MutexLock lock(&mu_);
      if (finished_ || writing_) return;
      if (finish_requested_) {
        finished_ = true;
        finish = true;
      } else if (!pending_.empty()) {
        message_.Clear();
        for (const ElectionChange& change : pending_) {
          FillElectionChange(change, message_.add_changes());
        }
        pending_.clear();
        writing_ = true;
      } else {
        return;
      }
    }
    if (finish) {
      reactor_->Finish(final_status_);
    } else {
      reactor_->StartWrite(&message_);
    }
  }

  void RequestFinish(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finish_requested_) return;
    finish_requested_ = true;
    final_status_ = std::move(status);
  }

  ObserveWriter* const reactor_;
  const ElectionWatchLimits limits_;
  std::atomic<int> refs_{1};  // the reactor's

  absl::Mutex mu_;
  uint64_t seen_term_ ABSL_GUARDED_BY(mu_);
  uint64_t seen_seq_ ABSL_GUARDED_BY(mu_);
  std::deque<ElectionChange> pending_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_;  // written before finished_, read after
  // Owned by whoever set writing_, until WriteDone().
  v1::ObserveResponse message_;
};

class ObserveReactor final : public ObserveWriter {
 public:
  // `observers` (may be null) has counted this stream.
  ObserveReactor(const v1::ObserveRequest& request, std::shared_ptr<LockManager> manager,
                 StreamQuota* observers, const ElectionWatchLimits& limits)
      : manager_(std::move(manager)),
        observers_(observers),
        election_(request.election()),
        stream_(
            new ObserveStream(this, request.after_term(), request.after_seq(), limits)) {
    absl::Status added = manager_->AddObserver(election_, stream_);
    if (!added.ok()) stream_->End(ToGrpcStatus(added));
  }

  void OnWriteDone(bool ok) override { stream_->WriteDone(ok); }
  void OnCancel() override {
    stream_->End(grpc::Status(grpc::StatusCode::CANCELLED, "the observer went away"));
  }
  void OnDone() override {
    manager_->RemoveObserver(election_, stream_);
    stream_->Unref();
    if (observers_ != nullptr) observers_->Give();
    delete this;
  }

 private:
  const std::shared_ptr<LockManager> manager_;
  StreamQuota* const observers_;  // may be null
  const std::string election_;
  ObserveStream* const stream_;  // holds the reactor's reference
};

// A stream that only finishes.
class RefusedObserve final : public ObserveWriter {
 public:
  explicit RefusedObserve(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::ObserveResponse>* StartElectionWatch(
    const v1::ObserveRequest& request, std::shared_ptr<LockManager> manager,
    StreamQuota* observers, const ElectionWatchLimits& limits) {
  if (observers != nullptr) {
    absl::Status taken = observers->Take();
    if (!taken.ok()) return RefuseElectionWatch(taken);
  }
  return new ObserveReactor(request, std::move(manager), observers, limits);
}

grpc::ServerWriteReactor<v1::ObserveResponse>* RefuseElectionWatch(
    const absl::Status& status) {
  return new RefusedObserve(status);
}

}  // namespace fencegate::lockservice
