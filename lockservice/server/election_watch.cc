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
#include "lockservice/server/stream_writer_state.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ObserveWriter = ResponseStream<v1::ObserveResponse>;

// The stream's state and logic, shared by the watch and the manager.
class ObserveStream final : public ElectionObserver,
                            public StreamWriterState<ObserveStream> {
 public:
  ObserveStream(ObserveWriter* writer, uint64_t after_term, uint64_t after_seq,
                const ElectionWatchLimits& limits)
      : writer_(writer), limits_(limits), seen_term_(after_term), seen_seq_(after_seq) {}

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

  // Decides under the lock, acts outside it (stream_writer_state.h); the
  // stream's events run it through WriteDone() and End().
  void Pump() {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      step = NextStep();
      if (step == Step::kWait || (step == Step::kFree && pending_.empty())) return;
      if (step == Step::kFree) {
        message_.Clear();
        for (const ElectionChange& change : pending_) {
          FillElectionChange(change, message_.add_changes());
        }
        pending_.clear();
        writing_ = true;
      }
    }
    if (step == Step::kFinish) {
      writer_->Finish(final_status_);
    } else {
      writer_->StartWrite(&message_);
    }
  }

 private:
  ObserveWriter* const writer_;
  const ElectionWatchLimits limits_;
  std::atomic<int> refs_{1};  // the watch's

  uint64_t seen_term_ ABSL_GUARDED_BY(mu_);
  uint64_t seen_seq_ ABSL_GUARDED_BY(mu_);
  std::deque<ElectionChange> pending_ ABSL_GUARDED_BY(mu_);
  // Owned by whoever set writing_, until WriteDone().
  v1::ObserveResponse message_;
};

// One Observe stream's producer, told of its events (response_stream.h).
class ElectionWatch final : public ResponseStreamEvents {
 public:
  // `observers` (may be null) has counted this stream.
  ElectionWatch(ObserveWriter* writer, const v1::ObserveRequest& request,
                std::shared_ptr<LockManager> manager, StreamQuota* observers,
                const ElectionWatchLimits& limits)
      : manager_(std::move(manager)),
        observers_(observers),
        election_(request.election()),
        stream_(new ObserveStream(writer, request.after_term(), request.after_seq(),
                                  limits)) {
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
  ObserveStream* const stream_;  // holds the watch's reference
};

}  // namespace

ResponseStreamEvents* StartElectionWatch(const v1::ObserveRequest& request,
                                         std::shared_ptr<LockManager> manager,
                                         StreamQuota* observers, ObserveWriter* writer,
                                         const ElectionWatchLimits& limits) {
  if (observers != nullptr) {
    absl::Status taken = observers->Take();
    if (!taken.ok()) {
      writer->Finish(ToGrpcStatus(taken));
      return nullptr;
    }
  }
  return new ElectionWatch(writer, request, std::move(manager), observers, limits);
}

}  // namespace fencegate::lockservice
