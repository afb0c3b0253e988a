#include "lockservice/forwarding_lock_service.h"

#include <atomic>
#include <functional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

struct ForwardingLockService::Shared {
  std::string target;
  std::unique_ptr<v1::LockService::Stub> stub;
  absl::Mutex mu;
  absl::flat_hash_set<CallReactor*> calls ABSL_GUARDED_BY(mu);
  bool abandoned ABSL_GUARDED_BY(mu) = false;
};

// One forwarded call: the server side's reactor, which owns the client
// side's context. It is deleted in OnDone, which gRPC runs only after
// Finish(), which runs only after the client call has completed.
class ForwardingLockService::CallReactor final : public grpc::ServerUnaryReactor {
 public:
  CallReactor(grpc::CallbackServerContext* server_context,
              std::shared_ptr<Shared> shared)
      // Carries the caller's deadline, and its cancellation.
      : client_context_(grpc::ClientContext::FromCallbackServerContext(*server_context)),
        shared_(std::move(shared)) {
    client_context_->AddMetadata(kForwardedMetadata, "1");
    absl::MutexLock lock(&shared_->mu);
    shared_->calls.insert(this);
    if (shared_->abandoned) Abandon();
  }

  grpc::ClientContext* client_context() { return client_context_.get(); }
  v1::LockService::Stub::async_interface* async() { return shared_->stub->async(); }

  // The client call's completion.
  std::function<void(grpc::Status)> Done() {
    return [this](grpc::Status status) {
      if (abandoned_.load() && !status.ok()) {
        status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                              absl::StrCat("the leader changed while this call was "
                                           "forwarded to ", shared_->target,
                                           "; retry with the same request_id"));
      } else if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
        status = grpc::Status(
            grpc::StatusCode::UNAVAILABLE,
            absl::StrCat("forwarding to the leader at ", shared_->target,
                         " failed: ", status.error_message(), "; retry"),
            status.error_details());
      }
      Finish(status);
    };
  }

  // Called with shared_->mu held, which keeps OnDone from deleting the
  // reactor meanwhile (the analysis cannot see that it is the same mutex).
  void Abandon() {
    abandoned_.store(true);
    client_context_->TryCancel();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&shared_->mu);
      shared_->calls.erase(this);
    }
    delete this;
  }

 private:
  const std::unique_ptr<grpc::ClientContext> client_context_;
  const std::shared_ptr<Shared> shared_;
  std::atomic<bool> abandoned_{false};
};

ForwardingLockService::ForwardingLockService(std::shared_ptr<grpc::Channel> channel,
                                             std::string target)
    : target_(std::move(target)), shared_(std::make_shared<Shared>()) {
  shared_->target = target_;
  shared_->stub = v1::LockService::NewStub(std::move(channel));
}

ForwardingLockService::~ForwardingLockService() = default;

void ForwardingLockService::Abandon() {
  absl::MutexLock lock(&shared_->mu);
  shared_->abandoned = true;
  for (CallReactor* call : shared_->calls) call->Abandon();
}

grpc::ServerUnaryReactor* ForwardingLockService::Acquire(
    grpc::CallbackServerContext* context, const v1::AcquireRequest* request,
    v1::AcquireResponse* response) {
  auto* call = new CallReactor(context, shared_);
  call->async()->Acquire(call->client_context(), request, response, call->Done());
  return call;
}

grpc::ServerUnaryReactor* ForwardingLockService::Renew(
    grpc::CallbackServerContext* context, const v1::RenewRequest* request,
    v1::RenewResponse* response) {
  auto* call = new CallReactor(context, shared_);
  call->async()->Renew(call->client_context(), request, response, call->Done());
  return call;
}

grpc::ServerUnaryReactor* ForwardingLockService::Release(
    grpc::CallbackServerContext* context, const v1::ReleaseRequest* request,
    v1::ReleaseResponse* response) {
  auto* call = new CallReactor(context, shared_);
  call->async()->Release(call->client_context(), request, response, call->Done());
  return call;
}

grpc::ServerUnaryReactor* ForwardingLockService::Describe(
    grpc::CallbackServerContext* context, const v1::DescribeRequest* request,
    v1::DescribeResponse* response) {
  auto* call = new CallReactor(context, shared_);
  call->async()->Describe(call->client_context(), request, response, call->Done());
  return call;
}

}  // namespace fencegate::lockservice
