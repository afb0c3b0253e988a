#include "common/server/health_service.h"

#include <string>
#include <utility>

namespace fencegate {

namespace health = ::grpc::health::v1;

// One Watch call. Its state is guarded by the service's mutex. It lives
// until its last operation is back: the done notice, each write, the
// finish.
class HealthService::Watch {
 public:
  explicit Watch(HealthService* health) : health_(health), writer_(&context_) {
    context_.AsyncNotifyWhenDone(&done_);
    health_->service_.RequestWatch(&context_, &request_, &writer_, health_->cq_,
                                   health_->cq_, &accepted_);
  }

  // Sends `status` when it differs from what was sent last (now, or after
  // the write in progress).
  void UpdateLocked(Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    want_ = status;
    if (!writing_) SendLocked();
  }
  // The service's mutex, which guards this watch (for the analysis: it is
  // the caller's mu_).
  absl::Mutex& mu() ABSL_LOCK_RETURNED(health_->mu_) { return health_->mu_; }
  // Whether it watches the server as a whole (else a name it does not know).
  bool overall() const { return request_.service().empty(); }
  // Ends the call once the last status is out.
  void EndLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    ending_ = true;
    if (!writing_) SendLocked();
  }

 private:
  enum Kind { kAccepted, kWritten, kFinished, kDone };
  using Event = OperationEvent<Watch, Kind>;
  friend Event;

  void On(Kind kind, bool ok) {
    if (kind == kAccepted && !ok) {  // the queue shuts down
      delete this;
      return;
    }
    if (kind == kAccepted) new Watch(health_);
    bool last = false;
    {
      absl::MutexLock lock(&health_->mu_);
      switch (kind) {
        case kAccepted: {
          ops_ = 1;  // the done notice
          health_->watches_.insert(this);
          want_ = health::HealthCheckResponse::SERVICE_UNKNOWN;
          health_->StatusOfLocked(request_.service(), &want_);
          ending_ = health_->shut_down_;
          SendLocked();
          return;
        }
        case kWritten:
          writing_ = false;
          if (!ok) failed_ = true;  // the client is gone; the done notice follows
          SendLocked();
          break;
        case kFinished:
          break;
        case kDone:
          health_->watches_.erase(this);
          failed_ = true;
          break;
      }
      last = --ops_ == 0;
    }
    if (last) delete this;
  }

  // Writes want_ if it is news, else finishes if ending.
  void SendLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_->mu_) {
    if (writing_ || finished_ || failed_) return;
    if (!sent_any_ || want_ != sent_) {
      sent_any_ = true;
      sent_ = want_;
      writing_ = true;
      ++ops_;
      response_.set_status(want_);
      writer_.Write(response_, &written_);
      return;
    }
    if (ending_) {
      finished_ = true;
      ++ops_;
      writer_.Finish(grpc::Status::OK, &finished_event_);
    }
  }

  HealthService* const health_;
  grpc::ServerContext context_;
  health::HealthCheckRequest request_;
  health::HealthCheckResponse response_;  // the write in progress
  grpc::ServerAsyncWriter<health::HealthCheckResponse> writer_;
  int ops_ = 0;
  Status want_ = health::HealthCheckResponse::UNKNOWN;
  Status sent_ = health::HealthCheckResponse::UNKNOWN;
  bool sent_any_ = false;
  bool writing_ = false;
  bool ending_ = false;
  bool finished_ = false;
  bool failed_ = false;
  Event accepted_{kAccepted, this};
  Event written_{kWritten, this};
  Event finished_event_{kFinished, this};
  Event done_{kDone, this};
};

HealthService::HealthService() = default;
HealthService::~HealthService() = default;

void HealthService::Serve(grpc::ServerCompletionQueue* cq) {
  cq_ = cq;
  check_ = std::make_unique<
      CqUnaryMethod<health::HealthCheckRequest, health::HealthCheckResponse>>(
      cq,
      [this](grpc::ServerContext* context, grpc::ByteBuffer* request,
             grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,
             grpc::ServerCompletionQueue* queue, void* tag) {
        service_.RequestCheck(context, request, responder, queue, queue, tag);
      },
      [this](grpc::ServerContext&, const health::HealthCheckRequest& request,
             health::HealthCheckResponse* response, UnaryReply* reply) {
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
  check_->Accept();
  new Watch(this);
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
