#include "bench/echo_cq_server.h"

#include <deque>
#include <utility>

namespace fencegate::bench {
namespace {

// What a completion queue tag points to: the thing to tell of the event.
class CqHandler {
 public:
  virtual ~CqHandler() = default;
  virtual void On(bool ok) = 0;
};

// One Echo.Call: accepted, answered, gone.
class CqCall final : public CqHandler {
 public:
  CqCall(Echo::AsyncService& service, grpc::ServerCompletionQueue& cq)
      : service_(service), cq_(cq), responder_(&context_) {
    service_.RequestCall(&context_, &request_, &responder_, &cq_, &cq_, this);
  }

  // The accept's event (`answered_` false), then the answer's.
  void On(bool ok) override {
    if (answered_ || !ok) {
      delete this;
      return;
    }
    new CqCall(service_, cq_);  // the next call's accept
    answered_ = true;
    responder_.Finish(request_, grpc::Status::OK, this);
  }

 private:
  Echo::AsyncService& service_;
  grpc::ServerCompletionQueue& cq_;
  grpc::ServerContext context_;
  EchoMessage request_;
  grpc::ServerAsyncResponseWriter<EchoMessage> responder_;
  bool answered_ = false;
};

// One Echo.Stream. Lives until its last operation is back after its end (a
// finish, or a failed read or write), then deletes itself.
class CqStream {
 public:
  enum Kind { kAccepted, kRead, kWritten, kFinished };
  // An operation's tag: the stream and what it was.
  struct Event final : CqHandler {
    Event(Kind kind, CqStream* stream) : kind(kind), stream(stream) {}
    void On(bool ok) override { stream->On(kind, ok); }
    const Kind kind;
    CqStream* const stream;
  };

  CqStream(Echo::AsyncService& service, grpc::ServerCompletionQueue& cq)
      : service_(service), cq_(cq), rw_(&context_) {
    ++pending_;
    service_.RequestStream(&context_, &rw_, &cq_, &cq_, &accepted_);
  }

  // Handles one event; deletes the stream after its last.
  void On(Kind kind, bool ok) {
    --pending_;
    switch (kind) {
      case kAccepted:
        if (!ok) break;               // the queue is shutting down
        new CqStream(service_, cq_);  // the next stream's accept
        Read();
        break;
      case kRead:
        if (!ok) {
          reads_done_ = true;
          MaybeFinish();
          break;
        }
        answers_.push_back(std::move(in_));
        in_.Clear();
        if (!writing_) WriteFront();
        Read();
        break;
      case kWritten:
        writing_ = false;
        answers_.pop_front();
        if (!ok) {
          failed_ = true;  // the client is gone: its read fails too
          answers_.clear();
        } else if (!answers_.empty()) {
          WriteFront();
        } else {
          MaybeFinish();
        }
        break;
      case kFinished:
        break;
    }
    if (pending_ == 0) delete this;
  }

 private:
  void Read() {
    ++pending_;
    rw_.Read(&in_, &read_);
  }
  void WriteFront() {
    writing_ = true;
    ++pending_;
    rw_.Write(answers_.front(), &written_);
  }
  void MaybeFinish() {
    if (reads_done_ && !writing_ && !failed_ && !finishing_) {
      finishing_ = true;
      ++pending_;
      rw_.Finish(grpc::Status::OK, &finished_);
    }
  }

  Echo::AsyncService& service_;
  grpc::ServerCompletionQueue& cq_;
  grpc::ServerContext context_;
  grpc::ServerAsyncReaderWriter<EchoMessage, EchoMessage> rw_;
  EchoMessage in_;
  // Deque: the front's address stays valid while more are pushed behind it.
  std::deque<EchoMessage> answers_;
  int pending_ = 0;
  bool writing_ = false;
  bool reads_done_ = false;
  bool failed_ = false;
  bool finishing_ = false;
  Event accepted_{kAccepted, this};
  Event read_{kRead, this};
  Event written_{kWritten, this};
  Event finished_{kFinished, this};
};

}  // namespace

void ServeEchoOn(Echo::AsyncService& service, grpc::ServerCompletionQueue& cq) {
  new CqCall(service, cq);
  new CqStream(service, cq);
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) static_cast<CqHandler*>(tag)->On(ok);
}

}  // namespace fencegate::bench
