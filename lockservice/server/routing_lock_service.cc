#include "lockservice/server/routing_lock_service.h"

#include <utility>

#include "absl/status/status.h"
#include "common/base/log.h"
#include "common/grpc/grpc_status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

void RoutingLockService::SetLocal(std::shared_ptr<Service> local) {
  absl::MutexLock lock(&mu_);
  local_ = std::move(local);
}

void RoutingLockService::ForwardTo(const std::string& address) {
  grpc::ChannelArguments args;
  // Back within a second of the leader's return (gRPC's default backoff
  // grows to two minutes), and replaceable when stuck.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  UseOwnSubchannels(args);
  leader_channel_ = grpc::CreateCustomChannel(
      address, peer_credentials_ ? peer_credentials_ : grpc::InsecureChannelCredentials(),
      args);
  leader_watch_.Reset();
  leader_ = std::make_shared<ForwardingLockService>(leader_channel_, address);
}

void RoutingLockService::SetLeader(const std::string& address) {
  std::shared_ptr<ForwardingLockService> previous;
  {
    absl::MutexLock lock(&mu_);
    if (leader_ != nullptr && leader_->target() == address) return;
    previous = std::move(leader_);
    leader_channel_.reset();
    if (!address.empty()) ForwardTo(address);
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
  std::shared_ptr<ForwardingLockService> stuck;
  {
    absl::MutexLock lock(&mu_);
    if (local_ != nullptr) {
      target = local_;
    } else if (!forwarded) {
      if (leader_ != nullptr && leader_watch_.Stuck(*leader_channel_)) {
        LogWarning("the channel to the leader at %s stopped reconnecting; replacing it",
                   leader_->target());
        stuck = std::move(leader_);
        ForwardTo(stuck->target());
      }
      target = leader_;
    }
  }
  if (stuck != nullptr) stuck->Abandon();
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
grpc::ServerUnaryReactor* RoutingLockService::Route(grpc::CallbackServerContext* context,
                                                    const Request* request,
                                                    Response* response,
                                                    Method<Request, Response> method) {
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

namespace {

// A server stream that ends at once with `status`.
template <typename Response>
class RefusedStream final : public grpc::ServerWriteReactor<Response> {
 public:
  explicit RefusedStream(const absl::Status& status) {
    this->Finish(ToGrpcStatus(status));
  }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::WatchFencesResponse>* RoutingLockService::WatchFences(
    grpc::CallbackServerContext* context, const v1::WatchFencesRequest* request) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) return new RefusedStream<v1::WatchFencesResponse>(refusal);
  return target->WatchFences(context, request);
}

grpc::ServerUnaryReactor* RoutingLockService::Campaign(
    grpc::CallbackServerContext* context, const v1::CampaignRequest* request,
    v1::AcquireResponse* response) {
  return Route(context, request, response, &Service::Campaign);
}

grpc::ServerUnaryReactor* RoutingLockService::Proclaim(
    grpc::CallbackServerContext* context, const v1::ProclaimRequest* request,
    v1::ProclaimResponse* response) {
  return Route(context, request, response, &Service::Proclaim);
}

grpc::ServerUnaryReactor* RoutingLockService::Leader(grpc::CallbackServerContext* context,
                                                     const v1::LeaderRequest* request,
                                                     v1::LeaderResponse* response) {
  return Route(context, request, response, &Service::Leader);
}

grpc::ServerUnaryReactor* RoutingLockService::Resign(grpc::CallbackServerContext* context,
                                                     const v1::ResignRequest* request,
                                                     v1::ResignResponse* response) {
  return Route(context, request, response, &Service::Resign);
}

grpc::ServerWriteReactor<v1::ObserveResponse>* RoutingLockService::Observe(
    grpc::CallbackServerContext* context, const v1::ObserveRequest* request) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) return new RefusedStream<v1::ObserveResponse>(refusal);
  return target->Observe(context, request);
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
