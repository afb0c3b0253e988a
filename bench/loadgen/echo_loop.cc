#include "bench/loadgen/echo_loop.h"

#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "bench/loadgen/grpc_util.h"
#include "echo.grpc.pb.h"
#include "grpcpp/support/client_callback.h"

namespace fencegate::bench {

// The reactor of one client's stream. One message in flight: its Done is
// set before the write and taken by the read of its echo.
class EchoLoop::Stream final : public grpc::ClientBidiReactor<EchoMessage, EchoMessage> {
 public:
  explicit Stream(std::shared_ptr<grpc::Channel> channel)
      : stub_(::fencegate::bench::Echo::NewStub(std::move(channel))) {
    stub_->async()->Stream(&context_, this);
    StartRead(&in_);
    StartCall();
  }

  void Send(size_t bytes, Done done) {
    {
      absl::MutexLock lock(&mu_);
      done_ = std::move(done);
      // The echo can come before the write's completion: one write at a
      // time (gRPC's rule), so the next waits for it.
      if (writing_) {
        write_pending_ = true;
        return;
      }
      writing_ = true;
      if (out_.payload().size() != bytes) out_.set_payload(std::string(bytes, 'e'));
    }
    StartWrite(&out_);
  }
  // Ends the stream; Finished() says when gRPC is done with it.
  void Close() { StartWritesDone(); }
  void AwaitDone() { finished_.WaitForNotification(); }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ends: OnDone
    Done done;
    {
      absl::MutexLock lock(&mu_);
      done = std::move(done_);
    }
    StartRead(&in_);  // the next echo comes only after the next write
    done(true);
  }
  void OnWriteDone(bool ok) override {
    Done failed;
    bool next = false;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        failed = std::move(done_);
      } else if (write_pending_) {
        write_pending_ = false;
        writing_ = next = true;
      }
    }
    if (failed) return failed(absl::UnavailableError("Echo.Stream: the write failed"));
    if (next) StartWrite(&out_);
  }
  void OnDone(const grpc::Status& status) override { finished_.Notify(); }

 private:
  std::unique_ptr<::fencegate::bench::Echo::Stub> stub_;
  grpc::ClientContext context_;
  EchoMessage in_;
  EchoMessage out_;
  absl::Mutex mu_;
  Done done_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_pending_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification finished_;
};

EchoLoop::EchoLoop(std::string target) : target_(std::move(target)) {}

EchoLoop::~EchoLoop() { Stop(); }

absl::Status EchoLoop::Open(int clients) {
  for (int c = 0; c < clients; ++c) {
    auto channel = ConnectOwnChannel(target_, kCallTimeout);
    if (!channel.ok()) return channel.status();
    streams_.push_back(std::make_unique<Stream>(*channel));
  }
  return absl::OkStatus();
}

void EchoLoop::Start(std::function<void(int)> kick) {
  for (size_t c = 0; c < streams_.size(); ++c) kick(static_cast<int>(c));
}

void EchoLoop::Stop() {
  for (auto& stream : streams_) stream->Close();
  for (auto& stream : streams_) stream->AwaitDone();
  streams_.clear();
}

void EchoLoop::Echo(int client, size_t bytes, Done done) {
  streams_[client]->Send(bytes, std::move(done));
}

}  // namespace fencegate::bench
