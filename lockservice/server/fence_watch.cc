#include "lockservice/server/fence_watch.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/grpc_status.h"
#include "lockservice/server/stream_writer_state.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using Writer = ResponseStream<v1::WatchFencesResponse>;

v1::FenceEvent::Kind ToProto(FenceEvent::Kind kind) {
  return kind == FenceEvent::Kind::kGranted ? v1::FenceEvent::GRANTED
                                            : v1::FenceEvent::EXPIRED;
}

// The stream's state and logic, shared by the watch and the feed.
class FenceStream final : public FenceFeed::Subscriber,
                          public StreamWriterState<FenceStream> {
 public:
  FenceStream(Writer* writer, uint64_t after, LockStore* store,
              const FenceWatchLimits& limits)
      : writer_(writer), store_(store), limits_(limits), sent_position_(after) {}

  // FenceFeed::Subscriber (commit thread, or the closing thread).
  void OnEvents(const std::vector<FenceEvent>& events) override {
    {
      absl::MutexLock lock(&mu_);
      if (finish_requested_) return;
      pending_.insert(pending_.end(), events.begin(), events.end());
      if (pending_.size() > limits_.max_pending) {
        RequestFinish(grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("the follower fell ", pending_.size(),
                         " fence events behind; reconnect with the last position "
                         "applied to catch up")));
      }
    }
    Pump();
  }

  void OnClose() override {
    End(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                     "the lock service is shutting down; reconnect to another "
                     "instance or after it restarts"));
  }

  // Decides the next step under the lock and takes it outside
  // (stream_writer_state.h). Whoever sets `writing_` owns the next write, or
  // the scan that produces it. The stream's events run it through
  // WriteDone() and End().
  void Pump() {
    for (;;) {
      enum class Action { kNone, kWrite, kScan, kFinish } action = Action::kNone;
      {
        absl::MutexLock lock(&mu_);
        const Step step = NextStep();
        if (step == Step::kWait) return;
        if (step == Step::kFinish) {
          action = Action::kFinish;
        } else if (catching_up_) {
          writing_ = true;
          action = Action::kScan;
        } else if (!pending_.empty()) {
          message_.Clear();
          FillFromPending();
          SetHead();
          if (message_.events_size() > 0) {
            writing_ = true;
            action = Action::kWrite;
          }
        }
      }
      switch (action) {
        case Action::kNone:
          return;
        case Action::kFinish:
          writer_->Finish(final_status_);
          return;
        case Action::kWrite:
          writer_->StartWrite(&message_);
          return;
        case Action::kScan:
          if (ScanPage()) {
            writer_->StartWrite(&message_);
            return;
          }
          continue;  // the scan failed and asked to finish
      }
    }
  }

 private:
  // One catch-up page into message_; the last one says caught_up and
  // carries the live events queued meanwhile. False on a store error.
  bool ScanPage() {
    uint64_t after;
    {
      absl::MutexLock lock(&mu_);
      after = sent_position_;
    }
    absl::StatusOr<std::vector<FencePosition>> page =
        store_->ScanFencePositions(after, limits_.catch_up_page);
    absl::MutexLock lock(&mu_);
    message_.Clear();
    if (!page.ok()) {
      writing_ = false;
      RequestFinish(ToGrpcStatus(absl::UnavailableError(
          absl::StrCat("the lock service could not read its fence positions (",
                       page.status().message(), "); reconnect"))));
      return false;
    }
    for (FencePosition& position : *page) {
      v1::FenceEvent* event = message_.add_events();
      event->set_resource(std::move(position.resource));
      event->set_position(position.position);
      sent_position_ = position.position;
    }
    if (page->size() < limits_.catch_up_page) {
      catching_up_ = false;
      message_.set_caught_up(true);
      FillFromPending();
    }
    SetHead();
    return true;
  }

  // The largest position known now: sent, or queued behind the message.
  void SetHead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t head = sent_position_;
    if (!pending_.empty()) head = std::max(head, pending_.back().position);
    message_.set_head_position(head);
  }

  // Moves queued events above sent_position_ into message_, up to the
  // message limit; drops those the catch-up already covered.
  void FillFromPending() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t taken = 0;
    while (!pending_.empty() && taken < limits_.max_message) {
      FenceEvent& next = pending_.front();
      if (next.position > sent_position_) {
        v1::FenceEvent* event = message_.add_events();
        event->set_resource(std::move(next.resource));
        event->set_position(next.position);
        event->set_kind(ToProto(next.kind));
        event->set_token(next.token);
        sent_position_ = next.position;
        ++taken;
      }
      pending_.pop_front();
    }
  }

  Writer* const writer_;
  LockStore* const store_;
  const FenceWatchLimits limits_;

  uint64_t sent_position_ ABSL_GUARDED_BY(mu_);
  bool catching_up_ ABSL_GUARDED_BY(mu_) = true;
  std::deque<FenceEvent> pending_ ABSL_GUARDED_BY(mu_);
  // Owned by whoever set writing_, until WriteDone().
  v1::WatchFencesResponse message_;
};

// One watch: the stream's producer, told of its events (response_stream.h).
class FenceWatch final : public ResponseStreamEvents {
 public:
  // `watchers` (may be null) has counted this stream.
  FenceWatch(Writer* writer, uint64_t after, LockStore* store, FenceFeed* feed,
             StreamQuota* watchers, const FenceWatchLimits& limits)
      : feed_(feed),
        watchers_(watchers),
        stream_(std::make_shared<FenceStream>(writer, after, store, limits)) {
    feed_->Subscribe(stream_);  // first, so the catch-up's scan misses nothing
    stream_->Pump();
  }

  void OnWriteDone(bool ok) override { stream_->WriteDone(ok); }
  void OnCancel() override {
    stream_->End(grpc::Status(grpc::StatusCode::CANCELLED, "the follower went away"));
  }
  void OnDone() override {
    feed_->Unsubscribe(stream_.get());
    if (watchers_ != nullptr) watchers_->Give();
    delete this;
  }

 private:
  FenceFeed* const feed_;
  StreamQuota* const watchers_;  // may be null
  const std::shared_ptr<FenceStream> stream_;
};

}  // namespace

ResponseStreamEvents* StartFenceWatch(const v1::WatchFencesRequest& request,
                                      LockStore* store, FenceFeed* feed,
                                      StreamQuota* watchers, Writer* writer,
                                      const FenceWatchLimits& limits) {
  if (watchers != nullptr) {
    absl::Status taken = watchers->Take();
    if (!taken.ok()) {
      writer->Finish(ToGrpcStatus(taken));
      return nullptr;
    }
  }
  return new FenceWatch(writer, request.after_position(), store, feed, watchers, limits);
}

}  // namespace fencegate::lockservice
