#include "common/server/cq_stream.h"

#include <atomic>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/byte_buffers.h"
#include "common/grpc/grpc_status.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/raw_stream_reads.h"

namespace fencegate {

// One stream. Reference counted by what is outstanding: the transport until
// its Finish() is back, the call's done notice once accepted, each read and
// write in progress. The last one back detaches the session and deletes it.
class CqStream final : public StreamTransport {
 public:
  explicit CqStream(CqStreamAcceptor* acceptor) : acceptor_(acceptor), rw_(&context_) {
    context_.AsyncNotifyWhenDone(&done_);
    acceptor_->request_(&context_, &rw_, acceptor_->cq_, &accepted_);
  }

  // StreamTransport: called by the session, under its lock, on any thread.
  // During a burst the read starts once the burst's answers are on their
  // way (RunAfterBurst says why); by then the session may have finished the
  // stream, and gRPC takes no operation after the finish: it is dropped.
  void StartRead() override {
    refs_.fetch_add(1, std::memory_order_relaxed);
    if (RunAfterBurst([this] { DeferredRead(); })) return;
    rw_.Read(&in_, &read_);
  }
  void StartWrite(std::string bytes) override {
    refs_.fetch_add(1, std::memory_order_relaxed);
    out_ = ByteBufferOf(std::move(bytes));
    rw_.Write(out_, &written_);
  }
  // The transport's reference passes to the finish, whose event drops it.
  void Finish(const absl::Status& status) override {
    absl::MutexLock lock(&finish_mu_);
    finishing_ = true;
    rw_.Finish(ToGrpcStatus(status), &finished_);
  }

 private:
  enum Kind { kAccepted, kRead, kWritten, kFinished, kDone };
  using Event = OperationEvent<CqStream, Kind>;
  friend Event;

  ~CqStream() = default;

  void On(Kind kind, bool ok) {
    switch (kind) {
      case kAccepted:
        // Not accepted: the queue shuts down. No done notice comes then.
        if (!ok) {
          delete this;
          return;
        }
        acceptor_->Accept();
        Accepted();
        return;
      case kRead:
        DeliverRead(ok, in_, *session_);
        break;
      case kWritten:
        out_.Clear();
        session_->OnWriteDone(ok);
        break;
      case kFinished:
        break;
      case kDone:
        if (context_.IsCancelled()) session_->OnCancel();
        break;
    }
    Unref();
  }

  void Accepted() {
    // The transport's reference and the done notice's.
    refs_.store(2, std::memory_order_relaxed);
    session_ = acceptor_->start_(context_, this);
    absl::Status closed;
    if (acceptor_->registry_ != nullptr &&
        !acceptor_->registry_->Add(session_, &closed)) {
      session_->Close(closed);
    }
  }

  void DeferredRead() {
    {
      absl::MutexLock lock(&finish_mu_);
      if (!finishing_) {
        rw_.Read(&in_, &read_);
        return;
      }
    }
    Unref();  // the read's reference
  }

  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (acceptor_->registry_ != nullptr) acceptor_->registry_->Remove(session_);
    session_->Detach();
    delete this;
  }

  CqStreamAcceptor* const acceptor_;
  grpc::ServerContext context_;
  RawServerStream rw_;
  grpc::ByteBuffer in_;   // the message being read
  grpc::ByteBuffer out_;  // the message being written
  StreamSession* session_ = nullptr;
  std::atomic<int> refs_{0};
  // Orders a deferred read against the finish (on another thread, under the
  // session's lock).
  absl::Mutex finish_mu_;
  bool finishing_ ABSL_GUARDED_BY(finish_mu_) = false;
  Event accepted_{kAccepted, this};
  Event read_{kRead, this};
  Event written_{kWritten, this};
  Event finished_{kFinished, this};
  Event done_{kDone, this};
};

void CqStreamAcceptor::Accept() { new CqStream(this); }

}  // namespace fencegate
