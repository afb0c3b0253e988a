// PipelinedStream: one bidirectional stream (a Session of either server)
// with up to `depth` calls in flight, for the tests that kill or stop a
// server under load: a writer thread sends call 1, 2, ... (each in a
// message of its own, made by `message(id)`) as soon as fewer than `depth`
// wait for their answers; a reader thread hands each response to
// `take(response)`, which records what the test needs and returns how
// many calls it answered. Both stop when the stream ends.
//
// Thread safety: `take` runs on the reader thread under the stream's
// lock, so what it records may be read in WaitUntil's condition, or freely
// after Join().
#ifndef FENCEGATE_TESTS_TESTING_PIPELINED_STREAM_H_
#define FENCEGATE_TESTS_TESTING_PIPELINED_STREAM_H_

#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "grpcpp/support/sync_stream.h"

namespace fencegate::testing {

template <typename Request, typename Response>
class PipelinedStream {
 public:
  using Stream = grpc::ClientReaderWriter<Request, Response>;

  // `open` starts the stream on the context it is given (a stub's
  // Session). The stream's deadline is two minutes.
  PipelinedStream(absl::FunctionRef<std::unique_ptr<Stream>(grpc::ClientContext*)> open,
                  int depth, absl::AnyInvocable<Request(uint64_t id)> message,
                  absl::AnyInvocable<int(const Response&)> take)
      : depth_(depth), message_(std::move(message)), take_(std::move(take)) {
    ctx_.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
    stream_ = open(&ctx_);
    writer_ = std::thread([this] { Write(); });
    reader_ = std::thread([this] { Read(); });
  }
  ~PipelinedStream() { Join(); }

  // Waits until `done()` (evaluated under the stream's lock, like `take`)
  // holds, or the stream ended; false unless `done()` within two minutes.
  bool WaitUntil(absl::FunctionRef<bool()> done) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done() || ended_; };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(120));
    return done();
  }
  // Joins both threads (the stream must have ended) and returns its status.
  grpc::Status Join() {
    if (writer_.joinable()) writer_.join();
    if (reader_.joinable()) reader_.join();
    if (!finished_) {
      status_ = stream_->Finish();
      finished_ = true;
    }
    return status_;
  }
  // The largest id sent.
  uint64_t sent() {
    absl::MutexLock lock(&mu_);
    return sent_;
  }

 private:
  void Write() {
    for (uint64_t id = 1;; ++id) {
      {
        absl::MutexLock lock(&mu_);
        auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return in_flight_ < depth_ || ended_;
        };
        mu_.Await(absl::Condition(&room));
        if (ended_) return;
        ++in_flight_;
        sent_ = id;
      }
      if (!stream_->Write(message_(id))) return;  // the stream ended
    }
  }

  void Read() {
    Response response;
    while (stream_->Read(&response)) {
      absl::MutexLock lock(&mu_);
      in_flight_ -= take_(response);
    }
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }

  const int depth_;
  absl::AnyInvocable<Request(uint64_t)> message_;  // writer thread only
  absl::AnyInvocable<int(const Response&)> take_;  // under mu_
  grpc::ClientContext ctx_;
  std::unique_ptr<Stream> stream_;
  std::thread writer_;
  std::thread reader_;
  grpc::Status status_;
  bool finished_ = false;
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_PIPELINED_STREAM_H_
