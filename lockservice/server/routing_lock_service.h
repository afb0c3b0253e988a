// RoutingLockService: fencegate.v1.LockService of one instance of a
// replicated lock service (several instances on one etcd cluster, one of
// them leading). Each call goes
//   - to the local leader's service while this instance leads (SetLocal),
//   - else to the leader, forwarded (SetLeader, forwarding_lock_service.h),
//   - else UNAVAILABLE: no leader is known, or the call was already
//     forwarded once by another instance (it is never forwarded twice).
// So clients may call any instance; UNAVAILABLE always means "retry"
// (the client library does, with the same request_id). A Session stream is
// routed when it starts, and stays with its target: a stream relayed to a
// leader that is replaced ends with UNAVAILABLE, as does a stream served
// here when this instance's term ends; the client reconnects. The channel
// to the leader reconnects within a second of the leader coming back, and
// is replaced when it has stopped reconnecting (common/server/stuck_channel.h).
//
// Thread safety: thread-safe. The role may change between calls; a call
// keeps the service it was routed to alive until it is done.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_ROUTING_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_ROUTING_LOCK_SERVICE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/server/stuck_channel.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/security/credentials.h"
#include "lockservice/server/forwarding_lock_service.h"
#include "lockservice/server/lock_service_base.h"

namespace fencegate::lockservice {

class RoutingLockService final : public LockServiceBase {
 public:
  using Service = LockServiceBase;

  // Calls are forwarded over channels with `peer_credentials` (TLS to the
  // other instances; null: plaintext).
  explicit RoutingLockService(
      std::shared_ptr<grpc::ChannelCredentials> peer_credentials = nullptr)
      : peer_credentials_(std::move(peer_credentials)) {}

  // Serve through `local` from now on (this instance leads); nullptr: it
  // no longer leads.
  void SetLocal(std::shared_ptr<Service> local);
  // The leader is at `address` ("host:port"); empty: no leader is known.
  // Calls forwarded to a previous leader are abandoned (UNAVAILABLE).
  void SetLeader(const std::string& address);
  // Leads, or knows a leader to forward to.
  bool serving();

  // Every method of the service (lock_service_base.h).
  FENCEGATE_LOCK_SERVICE_OVERRIDES

 private:
  // The service's method that answers a call with a Reactor, given its
  // context and `Args` (the request, and a unary call's response).
  template <typename Reactor, typename... Args>
  using Method = Reactor* (Service::*)(grpc::CallbackServerContext*, Args...);

  // Makes the call on its target (Target()): (target->*method)(context,
  // args...); or refuses it at once.
  template <typename Reactor, typename... Args>
  Reactor* Route(grpc::CallbackServerContext* context, Method<Reactor, Args...> method,
                 Args... args);
  // Where a call goes: the local service, the leader's forwarder, or
  // nothing (then *refusal says why).
  std::shared_ptr<Service> Target(grpc::CallbackServerContext* context,
                                  absl::Status* refusal);
  // A forwarder to `address` over a channel of its own.
  void ForwardTo(const std::string& address) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<grpc::ChannelCredentials> peer_credentials_;
  absl::Mutex mu_;
  std::shared_ptr<Service> local_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ForwardingLockService> leader_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<grpc::Channel> leader_channel_ ABSL_GUARDED_BY(mu_);
  StuckChannelWatch leader_watch_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_ROUTING_LOCK_SERVICE_H_
