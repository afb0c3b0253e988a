#include "bench/loadgen/echo_cq_loop.h"

#include <utility>

#include "bench/loadgen/grpc_util.h"
#include "echo.grpc.pb.h"

namespace fencegate::bench {

// An event's tag: what finished, and for which stream (null: the driver's
// own, Start's and Stop's alarms).
struct CqEvent {
  enum Kind { kStarted, kRead, kWritten, kWritesDone, kFinished, kStart, kClose } kind;
  EchoCqLoop::Stream* stream;
};

// One client's stream; touched by the event thread only (and by Open and
// the destructor, before and after it runs). One message in flight: its
// Done is set before the write and taken by the read of its echo.
//
// Nothing is written, and the stream is not closed, before StartCall's
// event: gRPC sends the call's initial metadata with the same operation set
// as a Write, so a Write before that event sends the metadata twice, which
// gRPC aborts on (TOO_MANY_OPERATIONS; it crashed 2% of short runs).
class EchoCqLoop::Stream {
 public:
  Stream(std::shared_ptr<grpc::Channel> channel, grpc::CompletionQueue& cq)
      : stub_(::fencegate::bench::Echo::NewStub(std::move(channel))),
        rw_(stub_->PrepareAsyncStream(&context_, &cq)) {
    rw_->StartCall(&started_);
  }

  void Send(size_t bytes, Done done) {
    done_ = std::move(done);
    if (out_.payload().size() != bytes) out_.set_payload(std::string(bytes, 'e'));
    // The echo can come before the write's completion: one write at a time
    // (gRPC's rule), so the next waits for it, as the first waits for the
    // call's start.
    if (writing_ || !call_started_) {
      write_pending_ = true;
      return;
    }
    Write();
  }

  // Returns true once the stream has ended.
  bool On(CqEvent::Kind kind, bool ok) {
    switch (kind) {
      case CqEvent::kStarted:
        call_started_ = true;
        if (!ok) {
          write_pending_ = false;
          if (done_) {
            std::exchange(done_, nullptr)(
                absl::UnavailableError("Echo.Stream: the call did not start"));
          }
          if (closing_) rw_->WritesDone(&writes_done_);  // then Finish: its status
          break;
        }
        rw_->Read(&in_, &read_);
        if (write_pending_) {
          write_pending_ = false;
          Write();
        } else if (closing_) {
          rw_->WritesDone(&writes_done_);
        }
        break;
      case CqEvent::kRead:
        if (ok) {
          Done done = std::move(done_);
          rw_->Read(&in_, &read_);  // the next echo comes only after the next write
          done(true);
        }
        break;
      case CqEvent::kWritten:
        writing_ = false;
        if (!ok) {
          if (done_) {
            std::exchange(done_, nullptr)(absl::UnavailableError("Echo.Stream: the write failed"));
          }
        } else if (write_pending_) {
          write_pending_ = false;
          Write();
        } else if (closing_) {
          rw_->WritesDone(&writes_done_);
        }
        break;
      case CqEvent::kWritesDone:
        rw_->Finish(&status_, &finished_);
        break;
      case CqEvent::kFinished:
        return true;
      default:
        break;
    }
    return false;
  }

  void Cancel() { context_.TryCancel(); }

  // Ends the stream once it has started and no write is in flight.
  void Close() {
    closing_ = true;
    if (call_started_ && !writing_) rw_->WritesDone(&writes_done_);
  }

 private:
  void Write() {
    writing_ = true;
    rw_->Write(out_, &written_);
  }

  std::unique_ptr<::fencegate::bench::Echo::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientAsyncReaderWriter<EchoMessage, EchoMessage>> rw_;
  EchoMessage in_;
  EchoMessage out_;
  grpc::Status status_;
  Done done_;
  bool call_started_ = false;  // StartCall's event came
  bool writing_ = false;
  bool write_pending_ = false;
  bool closing_ = false;
  CqEvent started_{CqEvent::kStarted, this};
  CqEvent read_{CqEvent::kRead, this};
  CqEvent written_{CqEvent::kWritten, this};
  CqEvent writes_done_{CqEvent::kWritesDone, this};
  CqEvent finished_{CqEvent::kFinished, this};
};

EchoCqLoop::EchoCqLoop(std::string target) : target_(std::move(target)) {}

EchoCqLoop::~EchoCqLoop() {
  if (thread_.joinable()) {
    Stop();
    return;
  }
  // Never started (Open failed): cancel the streams, drain the queue.
  for (auto& stream : streams_) stream->Cancel();
  cq_.Shutdown();
  void* tag;
  bool ok;
  while (cq_.Next(&tag, &ok)) {
  }
}

absl::Status EchoCqLoop::Open(int clients) {
  for (int c = 0; c < clients; ++c) {
    auto channel = ConnectOwnChannel(target_, kCallTimeout);
    if (!channel.ok()) return channel.status();
    streams_.push_back(std::make_unique<Stream>(*channel, cq_));
  }
  return absl::OkStatus();
}

void EchoCqLoop::Start(std::function<void(int)> kick) {
  kick_ = std::move(kick);
  thread_ = std::thread([this] { Run(); });
  // The kicks run on the event thread, as every Done.
  static CqEvent start{CqEvent::kStart, nullptr};
  start_alarm_.Set(&cq_, gpr_now(GPR_CLOCK_MONOTONIC), &start);
}

void EchoCqLoop::Run() {
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) {
    auto* event = static_cast<CqEvent*>(tag);
    if (event->kind == CqEvent::kStart) {
      for (size_t c = 0; c < streams_.size(); ++c) kick_(static_cast<int>(c));
    } else if (event->kind == CqEvent::kClose) {
      for (auto& stream : streams_) stream->Close();
    } else if (event->stream->On(event->kind, ok)) {
      ended_->DecrementCount();
    }
  }
}

void EchoCqLoop::Stop() {
  if (!thread_.joinable()) return;
  ended_ = std::make_unique<absl::BlockingCounter>(static_cast<int>(streams_.size()));
  static CqEvent close{CqEvent::kClose, nullptr};
  grpc::Alarm alarm;
  alarm.Set(&cq_, gpr_now(GPR_CLOCK_MONOTONIC), &close);
  ended_->Wait();
  cq_.Shutdown();
  thread_.join();
  streams_.clear();
}

void EchoCqLoop::Echo(int client, size_t bytes, Done done) {
  streams_[client]->Send(bytes, std::move(done));
}

}  // namespace fencegate::bench
