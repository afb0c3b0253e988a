#include "common/server/health_service.h"

#include <string>
#include <utility>

namespace fencegate {

namespace health = ::grpc::health::v1;
using Request = health::HealthCheckRequest;
using Response = health::HealthCheckResponse;

// One Watch stream's producer (response_stream.h): its state is guarded
// by the service's mutex, and its events run on the loop's thread. It
// lives until the stream's OnDone().
class HealthService::Watch final : public ResponseStreamEvents {
 public:
  Watch(HealthService* health, ResponseStream<Response>* stream,
        const std::string& service)
      : health_(health), stream_(stream), overall_(service.empty()) {
    absl::MutexLock lock(&health_->mu_);
    health_->watches_.insert(this);
    want_ = health::HealthCheckResponse::SERVICE_UNKNOWN;
    health_->StatusOfLocked(service, &want_);
    ending_ = health_->shut_down_;
    SendLocked();
  }

  // Sends `status` when it differs from what was sent last (now, or after
  // the write in progress).
  void UpdateLocked(Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    want_ = status;
    SendLocked();
  }
  // The service's mutex, which guards this watch (for the analysis: it is
  // the caller's mu_).
  absl::Mutex& mu() ABSL_LOCK_RETURNED(health_->mu_) { return health_->mu_; }
  // Whether it watches the server as a whole (else a name it does not know).
  bool overall() const { return overall_; }
  // Ends the call once the last status is out.
  void EndLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    ending_ = true;
    SendLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&health_->mu_);
    writing_ = false;
    if (!ok) gone_ = true;  // the client is gone
    SendLocked();
  }
  void OnCancel() override {
    absl::MutexLock lock(&health_->mu_);
    gone_ = true;
    SendLocked();
  }
  void OnDone() override {
    {
      absl::MutexLock lock(&health_->mu_);
      health_->watches_.erase(this);
    }
    delete this;
  }

 private:
  // Writes want_ if it is news, else finishes if ending or the client is
  // gone; never with a write in flight.
  void SendLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    if (writing_ || finished_) return;
    if (gone_) {
      finished_ = true;
      stream_->Finish(grpc::Status::CANCELLED);
      return;
    }
    if (!sent_any_ || want_ != sent_) {
      sent_any_ = true;
      sent_ = want_;
      writing_ = true;
      response_.set_status(want_);
      stream_->StartWrite(&response_);
      return;
    }
    if (ending_) {
      finished_ = true;
      stream_->Finish(grpc::Status::OK);
    }
  }

  HealthService* const health_;
  ResponseStream<Response>* const stream_;
  const bool overall_;
  Response response_;  // the write in progress
  Status want_ = health::HealthCheckResponse::UNKNOWN;
  Status sent_ = health::HealthCheckResponse::UNKNOWN;
  bool sent_any_ = false;
  bool writing_ = false;
  bool ending_ = false;
  bool finished_ = false;
  bool gone_ = false;
};

HealthService::HealthService() = default;
HealthService::~HealthService() = default;

void HealthService::Serve(grpc::ServerCompletionQueue* cq) {
  check_ = std::make_unique<CqUnaryMethod<Request, Response>>(
      cq,
      [this](grpc::ServerContext* context, grpc::ByteBuffer* request,
             grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,
             grpc::ServerCompletionQueue* queue, void* tag) {
        service_.RequestCheck(context, request, responder, queue, queue, tag);
      },
      [this](grpc::ServerContext&, const Request& request, Response* response,
             UnaryReply* reply) {
        Status status;
        if (!StatusOf(request.service(), &status)) {
          reply->Finish(
              absl::NotFoundError("unknown service: this server reports only on \"\" "
                                  "(the server as a whole)"));
          return;
        }
        response->set_status(status);
        reply->Finish(absl::OkStatus());
      });
  watch_ = std::make_unique<CqWriteStreamMethod<Request, Response>>(
      cq,
      [this](grpc::ServerContext* context, grpc::ByteBuffer* request,
             grpc::ServerAsyncWriter<grpc::ByteBuffer>* writer,
             grpc::ServerCompletionQueue* queue, void* tag) {
        service_.RequestWatch(context, request, writer, queue, queue, tag);
      },
      [this](grpc::ServerContext&, const Request& request,
             ResponseStream<Response>* stream) -> ResponseStreamEvents* {
        return new Watch(this, stream, request.service());
      });
  check_->Accept();
  watch_->Accept();
}

bool HealthService::StatusOf(const std::string& service, Status* status) {
  absl::MutexLock lock(&mu_);
  return StatusOfLocked(service, status);
}

bool HealthService::StatusOfLocked(const std::string& service, Status* status) {
  if (!service.empty()) return false;
  *status = serving_ && !shut_down_ ? health::HealthCheckResponse::SERVING
                                    : health::HealthCheckResponse::NOT_SERVING;
  return true;
}

void HealthService::SetServing(bool serving) {
  absl::MutexLock lock(&mu_);
  if (shut_down_ || serving_ == serving) return;
  serving_ = serving;
  for (Watch* watch : watches_) {
    watch->mu().AssertHeld();
    if (!watch->overall()) continue;
    watch->UpdateLocked(serving ? health::HealthCheckResponse::SERVING
                                : health::HealthCheckResponse::NOT_SERVING);
  }
}

void HealthService::Shutdown() {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  shut_down_ = true;
  for (Watch* watch : watches_) {
    watch->mu().AssertHeld();
    if (watch->overall()) watch->UpdateLocked(health::HealthCheckResponse::NOT_SERVING);
    watch->EndLocked();
  }
}

}  // namespace fencegate
