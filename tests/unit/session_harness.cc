#include "tests/unit/session_harness.h"

#include <atomic>
#include <cstdio>
#include <utility>

#include "common/errors.h"

namespace fencegate::gateway {
namespace {

constexpr absl::Duration kSafetyNet = absl::Seconds(60);

std::atomic<int> protocol_errors{0};

}  // namespace

int SessionHarness::ProtocolErrors() { return protocol_errors.load(); }

void SessionHarness::Breach(const char* what) {
  ++protocol_errors;
  std::fprintf(stderr, "session harness: the session broke the transport's rules: %s\n", what);
}

// ---------------------------------------------------------------- messages

v1::GatewayCall Call(uint64_t request_id, const v1::WriteRequest& write) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_write() = write;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::MultiWriteRequest& write) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_multi_write() = write;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::ReadRequest& read) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_read() = read;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::FenceRequest& fence) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_fence() = fence;
  return call;
}

v1::WriteRequest PutRequest(const std::string& resource, uint64_t token,
                            const std::string& key, const std::string& value) {
  v1::WriteRequest request;
  request.set_resource(resource);
  request.set_token(token);
  request.mutable_mutation()->set_key(key);
  request.mutable_mutation()->set_value(value);
  return request;
}

v1::ReadRequest ReadRequest(const std::string& resource, const std::string& key,
                            uint64_t token) {
  v1::ReadRequest request;
  request.set_resource(resource);
  request.set_key(key);
  request.set_token(token);
  return request;
}

v1::FenceRequest FenceRequest(const std::string& resource, uint64_t token) {
  v1::FenceRequest request;
  request.set_resource(resource);
  request.set_token(token);
  return request;
}

std::string Encode(const std::vector<v1::GatewayCall>& calls) {
  v1::GatewaySessionRequest message;
  for (const v1::GatewayCall& call : calls) *message.add_calls() = call;
  return message.SerializeAsString();
}

absl::StatusOr<std::vector<v1::GatewayResult>> Decode(const std::string& bytes) {
  v1::GatewaySessionResponse message;
  if (!message.ParseFromString(bytes)) {
    return absl::InternalError("a GatewaySessionResponse does not parse");
  }
  return std::vector<v1::GatewayResult>(message.results().begin(), message.results().end());
}

absl::Status StatusOf(const v1::GatewayResult& result) {
  if (result.result_case() != v1::GatewayResult::kError) return absl::OkStatus();
  return FromRpcStatus(result.error());
}

// ----------------------------------------------------------------- harness

SessionHarness::SessionHarness(FencedStore* store, SessionLimits limits) {
  session_ = Session::Start(store, limits, this);
}

SessionHarness::~SessionHarness() {
  if (!finished()) Cancel();
  PumpUntil([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return finished_.has_value(); });
  session_->Detach();
}

void SessionHarness::Send(const std::string& bytes) {
  {
    absl::MutexLock lock(&mu_);
    read_pending_ = false;
    sending_ = std::this_thread::get_id();
  }
  session_->OnMessage(bytes);
  absl::MutexLock lock(&mu_);
  sending_.reset();
}

void SessionHarness::HalfClose() {
  {
    absl::MutexLock lock(&mu_);
    read_pending_ = false;
  }
  session_->OnReadsDone();
}

void SessionHarness::Cancel() {
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

void SessionHarness::TakeWrites(bool take) {
  absl::MutexLock lock(&mu_);
  take_writes_ = take;
}

bool SessionHarness::ReadPending() {
  absl::MutexLock lock(&mu_);
  return read_pending_;
}

int SessionHarness::reads_started() {
  absl::MutexLock lock(&mu_);
  return reads_started_;
}

int SessionHarness::writes_started() {
  absl::MutexLock lock(&mu_);
  return writes_started_;
}

bool SessionHarness::WaitForWritesStarted(int n) {
  absl::MutexLock lock(&mu_);
  auto started = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return writes_started_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&started), kSafetyNet);
}

int SessionHarness::messages_taken() {
  absl::MutexLock lock(&mu_);
  return messages_taken_;
}

absl::StatusOr<v1::GatewayResult> SessionHarness::WaitForAnswer(uint64_t request_id) {
  auto answered = [this, request_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::GatewayResult& a : answers_) {
      if (a.request_id() == request_id) return true;
    }
    return false;
  };
  if (!PumpUntil(answered)) {
    return absl::DeadlineExceededError("no answer within the safety net");
  }
  return AnswersTo(request_id).front();
}

std::vector<v1::GatewayResult> SessionHarness::AnswersTo(uint64_t request_id) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::GatewayResult> out;
  for (const v1::GatewayResult& a : answers_) {
    if (a.request_id() == request_id) out.push_back(a);
  }
  return out;
}

std::vector<v1::GatewayResult> SessionHarness::answers() {
  absl::MutexLock lock(&mu_);
  return answers_;
}

absl::StatusOr<absl::Status> SessionHarness::WaitForFinish() {
  if (!PumpUntil([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return finished_.has_value();
      })) {
    return absl::DeadlineExceededError("the session did not finish within the safety net");
  }
  return *finished();
}

std::optional<absl::Status> SessionHarness::finished() {
  absl::MutexLock lock(&mu_);
  return finished_;
}

bool SessionHarness::PumpUntil(absl::FunctionRef<bool()> done) {
  const absl::Time deadline = absl::Now() + kSafetyNet;
  for (;;) {
    std::string bytes;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return done() || (take_writes_ && pending_write_.has_value());
      };
      if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) return false;
      if (done()) return true;
      bytes = std::move(*pending_write_);
      pending_write_.reset();
      ++messages_taken_;
      absl::StatusOr<std::vector<v1::GatewayResult>> results = Decode(bytes);
      if (!results.ok()) return false;
      for (v1::GatewayResult& r : *results) answers_.push_back(std::move(r));
    }
    session_->OnWriteDone(true);
  }
}

// ------------------------------------------------------------- transport

void SessionHarness::StartRead() {
  absl::MutexLock lock(&mu_);
  if (read_pending_) Breach("a second read while one is pending");
  if (sending_ && *sending_ != std::this_thread::get_id()) {
    Breach("a read asked for by another thread while a message is being handled");
  }
  if (finished_) Breach("a read after Finish");
  read_pending_ = true;
  ++reads_started_;
}

void SessionHarness::StartWrite(std::string bytes) {
  absl::MutexLock lock(&mu_);
  if (pending_write_) Breach("a second write while one is in progress");
  if (finished_) Breach("a write after Finish");
  pending_write_ = std::move(bytes);
  ++writes_started_;
}

void SessionHarness::Finish(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (finished_) Breach("Finish twice");
  if (pending_write_) Breach("Finish with a write in progress");
  finished_ = status;
}

}  // namespace fencegate::gateway
