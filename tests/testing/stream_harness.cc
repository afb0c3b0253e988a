#include "tests/testing/stream_harness.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fencegate::testing {
namespace {

constexpr absl::Duration kSafetyNet = absl::Seconds(60);

std::atomic<int> protocol_errors{0};

}  // namespace

int StreamHarness::ProtocolErrors() { return protocol_errors.load(); }

void StreamHarness::Breach(const char* what) {
  ++protocol_errors;
  std::fprintf(stderr, "stream harness: the session broke the transport's rules: %s\n",
               what);
}

StreamHarness::~StreamHarness() {
  if (!stopped_) {
    std::fprintf(stderr, "stream harness: destroyed without Stop()\n");
    std::abort();
  }
}

void StreamHarness::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!finished()) Cancel();
  PumpUntil([this]()
                ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return finished_.has_value(); });
  session_->Detach();
}

void StreamHarness::Send(const std::string& bytes) {
  {
    absl::MutexLock lock(&mu_);
    read_pending_ = false;
    sending_ = std::this_thread::get_id();
  }
  session_->OnMessage(bytes);
  absl::MutexLock lock(&mu_);
  sending_.reset();
}

void StreamHarness::HalfClose() {
  {
    absl::MutexLock lock(&mu_);
    read_pending_ = false;
  }
  session_->OnReadsDone();
}

void StreamHarness::Cancel() {
  session_->OnCancel();
  // gRPC ends a read in progress too.
  bool reading;
  {
    absl::MutexLock lock(&mu_);
    reading = std::exchange(read_pending_, false);
  }
  if (reading) session_->OnReadsDone();
  // And a write in progress, unsent.
  bool writing;
  {
    absl::MutexLock lock(&mu_);
    writing = pending_write_.has_value();
    pending_write_.reset();
  }
  if (writing) session_->OnWriteDone(false);
}

void StreamHarness::TakeWrites(bool take) {
  absl::MutexLock lock(&mu_);
  take_writes_ = take;
}

bool StreamHarness::ReadPending() {
  absl::MutexLock lock(&mu_);
  return read_pending_;
}

int StreamHarness::reads_started() {
  absl::MutexLock lock(&mu_);
  return reads_started_;
}

int StreamHarness::writes_started() {
  absl::MutexLock lock(&mu_);
  return writes_started_;
}

bool StreamHarness::WaitForWritesStarted(int n) {
  absl::MutexLock lock(&mu_);
  auto started = [this, n]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return writes_started_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&started), kSafetyNet);
}

int StreamHarness::messages_taken() {
  absl::MutexLock lock(&mu_);
  return messages_taken_;
}

void StreamHarness::TakeAll() {
  PumpUntil([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !take_writes_ || !pending_write_.has_value();
  });
}

absl::StatusOr<absl::Status> StreamHarness::WaitForFinish() {
  if (!PumpUntil([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return finished_.has_value();
      })) {
    return absl::DeadlineExceededError(
        "the session did not finish within the safety net");
  }
  return *finished();
}

std::optional<absl::Status> StreamHarness::finished() {
  absl::MutexLock lock(&mu_);
  return finished_;
}

bool StreamHarness::PumpUntil(absl::FunctionRef<bool()> done) {
  const absl::Time deadline = absl::Now() + kSafetyNet;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return done() || (take_writes_ && pending_write_.has_value());
      };
      if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) return false;
      if (done()) return true;
      const std::string bytes = std::move(*pending_write_);
      pending_write_.reset();
      ++messages_taken_;
      if (!Take(bytes)) {
        std::fprintf(stderr,
                     "stream harness: a message the session wrote does not parse\n");
        return false;
      }
    }
    session_->OnWriteDone(true);
  }
}

// ------------------------------------------------------------- transport

void StreamHarness::StartRead() {
  absl::MutexLock lock(&mu_);
  if (read_pending_) Breach("a second read while one is pending");
  if (sending_ && *sending_ != std::this_thread::get_id()) {
    Breach("a read asked for by another thread while a message is being handled");
  }
  // Asked for by the thread handling the message: that message is handled,
  // and what follows on that thread (StreamSession::AfterMessage's work,
  // such as the commit the message completed) lets other threads ask.
  if (sending_) sending_.reset();
  if (finished_) Breach("a read after Finish");
  read_pending_ = true;
  ++reads_started_;
}

void StreamHarness::StartWrite(std::string bytes) {
  absl::MutexLock lock(&mu_);
  if (pending_write_) Breach("a second write while one is in progress");
  if (finished_) Breach("a write after Finish");
  pending_write_ = std::move(bytes);
  ++writes_started_;
}

void StreamHarness::Finish(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (finished_) Breach("Finish twice");
  if (pending_write_) Breach("Finish with a write in progress");
  finished_ = status;
}

}  // namespace fencegate::testing
