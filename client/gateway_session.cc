#include "client/gateway_session.h"

#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"

namespace fencegate::client {

struct GatewaySession::Stream {
  grpc::ClientContext context;
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::GatewaySessionRequest, v1::GatewaySessionResponse>>
      rw;
  std::thread reader;
  // Guarded by the session's mu_: the calls sent and not yet answered, and
  // whether the stream has ended (then nothing is added).
  absl::flat_hash_map<uint64_t, Done> waiting;
  bool ended = false;
};

GatewaySession::GatewaySession(v1::Gateway::Stub* stub, size_t max_in_flight)
    : stub_(stub), max_in_flight_(max_in_flight == 0 ? 1 : max_in_flight) {}

GatewaySession::~GatewaySession() {
  std::shared_ptr<Stream> stream;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    stream = std::move(stream_);
  }
  if (stream == nullptr) return;
  stream->context.TryCancel();  // the reader fails the calls still waiting
  stream->reader.join();
}

std::shared_ptr<GatewaySession::Stream> GatewaySession::OpenStream() {
  if (stream_ != nullptr && !stream_->ended) return stream_;
  if (stream_ != nullptr) {
    // It ended: its reader has failed its calls (or is running their
    // callbacks, which never take mu_) and returns.
    stream_->reader.join();
    stream_.reset();
  }
  auto stream = std::make_shared<Stream>();
  stream->rw = stub_->Session(&stream->context);
  if (stream->rw == nullptr) return nullptr;
  stream->reader = std::thread([this, s = stream.get()] { ReadAnswers(s); });
  stream_ = stream;
  return stream;
}

GatewaySession::Done GatewaySession::Take(Stream& stream, uint64_t id) {
  auto it = stream.waiting.find(id);
  if (it == stream.waiting.end()) return nullptr;
  Done done = std::move(it->second);
  stream.waiting.erase(it);
  --in_flight_;
  return done;
}

void GatewaySession::Call(v1::GatewayCall call, absl::Time deadline, Done done) {
  absl::Status refused;
  // A place in flight first, reserved while holding only mu_: the reader
  // frees places under mu_ alone, and needs write_mu_ to finish a stream.
  {
    absl::MutexLock lock(&mu_);
    auto has_place = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return closing_ || in_flight_ < max_in_flight_;
    };
    if (mu_.AwaitWithDeadline(absl::Condition(&has_place), deadline)) {
      ++in_flight_;
    } else {
      refused = absl::DeadlineExceededError(absl::StrCat(
          "no place on the gateway's Session stream before the call's deadline (",
          max_in_flight_, " calls in flight)"));
    }
  }
  if (!refused.ok()) {
    done(refused);
    return;
  }
  // Then its id and its write, in one turn of write_mu_: calls go out in
  // the order they got their ids.
  absl::MutexLock in_order(&write_mu_);
  std::shared_ptr<Stream> stream;
  {
    absl::MutexLock lock(&mu_);
    if (closing_) {
      refused = absl::UnavailableError("the gateway client is closing");
    } else if (stream = OpenStream(); stream == nullptr) {
      refused = absl::UnavailableError("could not open the gateway's Session stream");
    } else {
      const uint64_t id = next_id_++;
      call.set_request_id(id);
      stream->waiting.emplace(id, std::move(done));
    }
    if (!refused.ok()) --in_flight_;
  }
  if (!refused.ok()) {
    done(refused);
    return;
  }
  v1::GatewaySessionRequest message;
  *message.add_calls() = std::move(call);
  // A failed write means the stream ended: its reader fails the call.
  stream->rw->Write(message);
}

absl::StatusOr<v1::GatewayResult> GatewaySession::CallAndWait(v1::GatewayCall call,
                                                              absl::Time deadline) {
  struct Answer {
    absl::Notification done;
    absl::StatusOr<v1::GatewayResult> result;
  };
  auto answer = std::make_shared<Answer>();
  Call(std::move(call), deadline, [answer](absl::StatusOr<v1::GatewayResult> result) {
    answer->result = std::move(result);
    answer->done.Notify();
  });
  if (!answer->done.WaitForNotificationWithDeadline(deadline)) {
    return absl::DeadlineExceededError(
        "the gateway did not answer on its Session stream within the deadline; the "
        "call may still be applied");
  }
  return std::move(answer->result);
}

void GatewaySession::ReadAnswers(Stream* stream) {
  v1::GatewaySessionResponse message;
  std::vector<std::pair<Done, absl::StatusOr<v1::GatewayResult>>> answered;
  while (stream->rw->Read(&message)) {
    {
      absl::MutexLock lock(&mu_);
      for (v1::GatewayResult& result : *message.mutable_results()) {
        Done done = Take(*stream, result.request_id());
        if (done == nullptr) continue;  // not ours to answer any more
        if (result.result_case() == v1::GatewayResult::kError) {
          answered.emplace_back(std::move(done), FromRpcStatus(result.error()));
        } else {
          answered.emplace_back(std::move(done), std::move(result));
        }
      }
    }
    for (auto& [done, result] : answered) done(std::move(result));
    answered.clear();
  }
  absl::Status finished;
  {
    // Not while a Write() is under way: it fails soon, the stream is over.
    absl::MutexLock no_write(&write_mu_);
    finished = FromGrpcStatus(stream->rw->Finish());
  }
  const absl::Status lost = absl::UnavailableError(absl::StrCat(
      "the gateway's Session stream ended before the answer; the call may or may "
      "not have been applied (",
      finished.ok() ? "it finished" : finished.ToString(), ")"));
  std::vector<Done> failed;
  {
    absl::MutexLock lock(&mu_);
    stream->ended = true;
    for (auto& [id, done] : stream->waiting) failed.push_back(std::move(done));
    in_flight_ -= stream->waiting.size();
    stream->waiting.clear();
  }
  for (Done& done : failed) done(lost);
}

}  // namespace fencegate::client
