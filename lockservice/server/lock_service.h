// LockServiceImpl: fencegate.v1.LockService over gRPC's callback API. It
// translates (proto in, LockManager call, proto out) and adds what belongs
// to the wire: signatures and caller identity. A parked Acquire holds no
// thread: its reactor waits for the manager's callback, and a client that
// goes away cancels the wait.
//
// Signing (a TokenSigner given): every grant's reply carries the token's
// signature, and Renew and Release must carry a valid one (PERMISSION_DENIED
// otherwise), so a guessed token can neither renew nor release someone
// else's lease. Mutual TLS (CallerIdentity::mutual_tls): the holder
// recorded is the client certificate's subject, plus "/" + the request's
// holder if given, and Renew and Release must come from that subject. A call
// another instance forwarded (a standby, forwarding_lock_service.h) carries
// its caller's subject in metadata; it is believed only when the connection
// itself comes from a certificate with the deployment's peer subject.
//
// Authorization (CallerIdentity::authorizer, --policy): every call, unary
// or on a Session stream, is first checked for that subject
// (lockservice/core/lock_call_authz.h); a refused one gets
// PERMISSION_DENIED and nothing else is done.
//
// Session streams are LockSessions (lock_session.h) in StreamReactors; the
// manager ends them when it stops (Shutdown(), or the end of a term). They
// are listed in `sessions` if given, so that a server's shutdown can wait
// for them to end (StreamRegistry::AwaitEnded), and so that there are at
// most --max_sessions. WatchFences streams (fence_watch.h) are counted in
// `fence_watchers` if given: at most --max_fence_watchers; Observe streams
// (election_watch.h) in `observers`: at most --max_election_observers.
//
// Thread safety: gRPC calls it from many threads; all state is in the
// manager. Ownership: the service and each parked Acquire's reactor share
// the manager, so it lives until the last of them is done (an instance of
// a replicated deployment replaces its manager at each term). The other
// pointers must outlive the service and its calls; `signer` may be null
// (no signing).
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "common/authz/authorizer.h"
#include "common/core/stream_quota.h"
#include "common/core/stream_session.h"
#include "common/core/token_signer.h"
#include "common/grpc/grpc_status.h"
#include "common/server/stream_reactor.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_requests.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/server/lock_service_base.h"

namespace fencegate::lockservice {

// How a caller's identity is established, and what it may do.
struct CallerIdentity {
  bool mutual_tls = false;  // the server requires client certificates
  // The certificate subject of this deployment's own instances (etcd
  // store), whose forwarded calls may name their caller; empty: none.
  std::string peer_subject;
  // The policy (--policy) every call is checked against for its caller's
  // subject (a forwarded call: the subject it names); null: none, all is
  // allowed. Must outlive the service.
  const authz::Authorizer* authorizer = nullptr;
};

class LockServiceImpl final : public LockServiceBase {
 public:
  LockServiceImpl(std::shared_ptr<LockManager> manager, LockStore* store, FenceFeed* feed,
                  const TokenSigner* signer, CallerIdentity identity,
                  const StreamLimits& session_limits = StreamLimits(),
                  StreamRegistry* sessions = nullptr,
                  StreamQuota* fence_watchers = nullptr, StreamQuota* observers = nullptr)
      : manager_(std::move(manager)),
        store_(store),
        feed_(feed),
        signer_(signer),
        identity_(std::move(identity)),
        session_limits_(session_limits),
        sessions_(sessions),
        fence_watchers_(fence_watchers),
        observers_(observers) {}

  // Every method of the service (lock_service_base.h); the elections'
  // (Campaign, Proclaim, Leader, Resign, Observe) are in
  // lock_service_elections.cc.
  FENCEGATE_LOCK_SERVICE_OVERRIDES

 private:
  // Who makes the call (lock_requests.h); PERMISSION_DENIED for a
  // forwarded call that names no caller.
  absl::StatusOr<Caller> CallerOf(grpc::CallbackServerContext* context) const;
  // The caller's certificate subject (empty without mutual TLS); for a call
  // a peer forwarded, the subject it names. PERMISSION_DENIED for a
  // forwarded call that names none.
  absl::StatusOr<std::string> CallerSubject(grpc::CallbackServerContext* context) const;
  // OK if the request has no unknown fields and the policy lets the caller
  // make this call (lock_call_authz.h), else why not; for the calls that
  // need no Caller (Describe, WatchFences, Leader, Observe).
  template <typename Request>
  absl::Status Authorized(grpc::CallbackServerContext* context,
                          const Request& request) const;
  // The caller (CallerOf) if the request has no unknown fields and the
  // policy lets it make this call (Acquire, Renew, Release, Campaign,
  // Proclaim, Resign), else why not.
  template <typename Request>
  absl::StatusOr<Caller> AllowedCaller(grpc::CallbackServerContext* context,
                                       const Request& request) const;
  // The manager's arguments for `request`, made by ArgsFor (RenewArgsFor,
  // ProclaimArgsFor, ...) for the caller AllowedCaller admits; or why not.
  template <auto ArgsFor, typename Request>
  std::invoke_result_t<decltype(ArgsFor), const Request&, const TokenSigner*,
                       const LockLimits&, const Caller&>
  AllowedArgs(grpc::CallbackServerContext* context, const Request& request) const {
    absl::StatusOr<Caller> caller = AllowedCaller(context, request);
    if (!caller.ok()) return caller.status();
    return ArgsFor(request, signer_, manager_->limits(), *caller);
  }
  // The manager's callback for a unary call on `reactor`: `fill` makes the
  // response of a result; then the call finishes with the result's status.
  template <typename Result, typename Fill>
  static auto Answer(grpc::ServerUnaryReactor* reactor, Fill fill) {
    return [reactor, fill = std::move(fill)](absl::StatusOr<Result> result) {
      if (result.ok()) fill(*result);
      reactor->Finish(ToGrpcStatus(result.status()));
    };
  }
  // Ends the unary call on `reactor` with `status`; returns `reactor`.
  static grpc::ServerUnaryReactor* Finished(grpc::ServerUnaryReactor* reactor,
                                            const absl::Status& status);
  // The reactor of a call that may park (Acquire, Campaign): its client
  // going away cancels the wait (CancelAcquire(id)).
  grpc::ServerUnaryReactor* NewAcquireReactor(LockManager::CallId id);
  // Hands `args` (or their error) to the manager's Acquire as call `id`,
  // and answers on `reactor` with `response` (an Acquire's or a Campaign's).
  void StartAcquire(grpc::CallbackServerContext* context, LockManager::CallId id,
                    grpc::ServerUnaryReactor* reactor, absl::StatusOr<AcquireArgs> args,
                    fencegate::v1::AcquireResponse* response);
  // Acquire with `resources` set (several at once): answers on `reactor`,
  // cancelled as the single Acquire's call `id` is.
  void AcquireMany(grpc::CallbackServerContext* context, LockManager::CallId id,
                   grpc::ServerUnaryReactor* reactor,
                   const fencegate::v1::AcquireRequest& request, const Caller& caller,
                   fencegate::v1::AcquireResponse* response);

  const std::shared_ptr<LockManager> manager_;
  LockStore* const store_;
  FenceFeed* const feed_;
  const TokenSigner* const signer_;
  const CallerIdentity identity_;
  const StreamLimits session_limits_;
  StreamRegistry* const sessions_;     // may be null
  StreamQuota* const fence_watchers_;  // may be null
  StreamQuota* const observers_;       // may be null
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_
