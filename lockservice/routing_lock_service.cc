#include "lockservice/routing_lock_service.h"

#include <utility>

#include "absl/status/status.h"
#include "common/grpc_status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

void RoutingLockService::SetLocal(std::shared_ptr<Service> local) {
  absl::MutexLock lock(&mu_);
  local_ = std::move(local);
}

void RoutingLockService::SetLeader(const std::string& address) {
  std::shared_ptr<ForwardingLockService> previous;
  {
    absl::MutexLock lock(&mu_);
    if (leader_ != nullptr && leader_->target() == address) return;
    previous = std::move(leader_);
    if (!address.empty()) {
      leader_ = std::make_shared<ForwardingLockService>(
          grpc::CreateChannel(address, peer_credentials_ ? peer_credentials_
                                                         : grpc::InsecureChannelCredentials()),
          address);
    }
  }
  if (previous != nullptr) previous->Abandon();
}

bool RoutingLockService::serving() {
  absl::MutexLock lock(&mu_);
  return local_ != nullptr || leader_ != nullptr;
}

std::shared_ptr<RoutingLockService::Service> RoutingLockService::Target(
    grpc::CallbackServerContext* context, absl::Status* refusal) {
  const bool forwarded = context->client_metadata().count(kForwardedMetadata) > 0;
  std::shared_ptr<Service> target;
  {
    absl::MutexLock lock(&mu_);
    if (local_ != nullptr) {
      target = local_;
    } else if (!forwarded) {
      target = leader_;
    }
  }
  if (target == nullptr) {
    *refusal = absl::UnavailableError(
        forwarded ? "this lock-service instance no longer leads (leadership moved "
                    "while the call was forwarded); retry"
                  : "no lock-service instance leads right now (an election is under "
                    "way); retry");
  }
  return target;
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* RoutingLockService::Route(
    grpc::CallbackServerContext* context, const Request* request,
    Response* response, Method<Request, Response> method) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpcStatus(refusal));
    return reactor;
  }
  return (target.get()->*method)(context, request, response);
}

grpc::ServerUnaryReactor* RoutingLockService::Acquire(
    grpc::CallbackServerContext* context, const v1::AcquireRequest* request,
    v1::AcquireResponse* response) {
  return Route(context, request, response, &Service::Acquire);
}

grpc::ServerUnaryReactor* RoutingLockService::Renew(grpc::CallbackServerContext* context,
                                                    const v1::RenewRequest* request,
                                                    v1::RenewResponse* response) {
  return Route(context, request, response, &Service::Renew);
}

grpc::ServerUnaryReactor* RoutingLockService::Release(
    grpc::CallbackServerContext* context, const v1::ReleaseRequest* request,
    v1::ReleaseResponse* response) {
  return Route(context, request, response, &Service::Release);
}

grpc::ServerUnaryReactor* RoutingLockService::Describe(
    grpc::CallbackServerContext* context, const v1::DescribeRequest* request,
    v1::DescribeResponse* response) {
  return Route(context, request, response, &Service::Describe);
}


grpc::ServerWriteReactor<v1::WatchFencesResponse>* RoutingLockService::WatchFences(
    grpc::CallbackServerContext* context, const v1::WatchFencesRequest* request) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) {
    class Refused final : public grpc::ServerWriteReactor<v1::WatchFencesResponse> {
     public:
      explicit Refused(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
      void OnDone() override { delete this; }
    };
    return new Refused(refusal);
  }
  return target->WatchFences(context, request);
}

RawStreamReactor* RoutingLockService::Session(grpc::CallbackServerContext* context) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) {
    class Refused final : public RawStreamReactor {
     public:
      explicit Refused(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
      void OnDone() override { delete this; }
    };
    return new Refused(refusal);
  }
  return target->Session(context);
}

}  // namespace fencegate::lockservice
