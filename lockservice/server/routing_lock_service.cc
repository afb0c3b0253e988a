#include "lockservice/server/routing_lock_service.h"

#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "common/base/log.h"
#include "common/grpc/grpc_status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "lockservice/server/refused_stream.h"

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

namespace {

// A call refused at once with `status`: a unary call's default reactor, or
// a stream that ends at once.
template <typename Reactor>
Reactor* Refused(grpc::CallbackServerContext* context, const absl::Status& status) {
  if constexpr (std::is_same_v<Reactor, grpc::ServerUnaryReactor>) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  } else {
    return new RefusedStream<Reactor>(status);
  }
}

}  // namespace

template <typename Reactor, typename... Args>
Reactor* RoutingLockService::Route(grpc::CallbackServerContext* context,
                                   Method<Reactor, Args...> method, Args... args) {
  absl::Status refusal;
  std::shared_ptr<Service> target = Target(context, &refusal);
  if (target == nullptr) return Refused<Reactor>(context, refusal);
  return (target.get()->*method)(context, args...);
}

// Every method, routed to the same method of the target (lock_service_base.h).
#define FENCEGATE_ROUTE_UNARY_(Method, Request, Response)                      \
  grpc::ServerUnaryReactor* RoutingLockService::Method(                        \
      grpc::CallbackServerContext* context, const v1::Request* request,        \
      v1::Response* response) {                                                \
    return Route<grpc::ServerUnaryReactor>(context, &Service::Method, request, \
                                           response);                          \
  }
#define FENCEGATE_ROUTE_STREAM_(Method, Request, Response)                          \
  grpc::ServerWriteReactor<v1::Response>* RoutingLockService::Method(               \
      grpc::CallbackServerContext* context, const v1::Request* request) {           \
    return Route<grpc::ServerWriteReactor<v1::Response>>(context, &Service::Method, \
                                                         request);                  \
  }
FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_ROUTE_UNARY_)
FENCEGATE_LOCK_SERVICE_WRITE_METHODS(FENCEGATE_ROUTE_STREAM_)
#undef FENCEGATE_ROUTE_UNARY_
#undef FENCEGATE_ROUTE_STREAM_

RawStreamReactor* RoutingLockService::Session(grpc::CallbackServerContext* context) {
  return Route<RawStreamReactor>(context, &Service::Session);
}

}  // namespace fencegate::lockservice
