// LockServiceCalls: what the lock service does with each call of
// fencegate.v1.LockService, whichever gRPC API carries it (the SQLite
// server's completion-queue loop, loop_lock_service.h; the callback API of
// an etcd deployment's leader, lock_service.h). It translates (proto in,
// LockManager call, proto out) and adds what belongs to the wire:
// signatures and caller identity. A parked Acquire holds no thread: its
// reply waits for the manager's callback, and a client that goes away
// cancels the wait (UnaryReply::OnCancelled).
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
// Session streams are LockSessions (lock_session.h) on the transport's
// streams; the manager ends them when it stops (Shutdown(), or the end of a
// term). They are listed in `sessions` if given, so that a server's
// shutdown can wait for them to end (StreamRegistry::AwaitEnded), and so
// that there are at most --max_sessions. WatchFences streams
// (fence_watch.h) are counted in `fence_watchers` if given: at most
// --max_fence_watchers; Observe streams (election_watch.h) in `observers`:
// at most --max_election_observers.
//
// Thread safety: the methods may run on any threads at once; all state is
// in the manager. Ownership: the calls and each parked Acquire's callback
// share the manager, so it lives until the last of them is done (an
// instance of a replicated deployment replaces its manager at each term).
// The other pointers must outlive the calls and their streams; `signer`
// may be null (no signing).
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_CALLS_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_CALLS_H_

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
#include "common/server/cq_unary.h"
#include "common/server/response_stream.h"
#include "common/server/stream_registry.h"
#include "fencegate/v1/lock.pb.h"
#include "grpcpp/server_context.h"
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

class LockServiceCalls {
 public:
  LockServiceCalls(std::shared_ptr<LockManager> manager, LockStore* store,
                   FenceFeed* feed, const TokenSigner* signer, CallerIdentity identity,
                   const StreamLimits& session_limits = StreamLimits(),
                   StreamRegistry* sessions = nullptr,
                   StreamQuota* fence_watchers = nullptr,
                   StreamQuota* observers = nullptr)
      : manager_(std::move(manager)),
        store_(store),
        feed_(feed),
        signer_(signer),
        identity_(std::move(identity)),
        session_limits_(session_limits),
        sessions_(sessions),
        fence_watchers_(fence_watchers),
        observers_(observers) {}

  // Each unary method (lock_service_base.h's list): fills `response` and
  // calls reply->Finish() once, now or when the manager answers. The
  // election calls are in lock_service_calls_elections.cc.
#define FENCEGATE_LOCK_SERVICE_CALLS_UNARY_(Method, Request, Response)                 \
  void Method(grpc::ServerContextBase& context, const fencegate::v1::Request& request, \
              fencegate::v1::Response* response, UnaryReply* reply);
  FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_LOCK_SERVICE_CALLS_UNARY_)
#undef FENCEGATE_LOCK_SERVICE_CALLS_UNARY_

  // The server streams: each starts its producer on `stream` and returns
  // it, or null when it finished the stream at once (a refusal).
  ResponseStreamEvents* WatchFences(
      grpc::ServerContextBase& context, const fencegate::v1::WatchFencesRequest& request,
      ResponseStream<fencegate::v1::WatchFencesResponse>* stream);
  ResponseStreamEvents* Observe(grpc::ServerContextBase& context,
                                const fencegate::v1::ObserveRequest& request,
                                ResponseStream<fencegate::v1::ObserveResponse>* stream);

  // A Session stream's session, on `transport`.
  StreamSession* Session(grpc::ServerContextBase& context, StreamTransport* transport);
  // Where the Session streams are listed (may be null).
  StreamRegistry* sessions() const { return sessions_; }

 private:
  // Who makes the call (lock_requests.h); PERMISSION_DENIED for a
  // forwarded call that names no caller.
  absl::StatusOr<Caller> CallerOf(grpc::ServerContextBase& context) const;
  // The caller's certificate subject (empty without mutual TLS); for a call
  // a peer forwarded, the subject it names. PERMISSION_DENIED for a
  // forwarded call that names none.
  absl::StatusOr<std::string> CallerSubject(grpc::ServerContextBase& context) const;
  // OK if the request has no unknown fields and the policy lets the caller
  // make this call (lock_call_authz.h), else why not; for the calls that
  // need no Caller (Describe, WatchFences, Leader, Observe).
  template <typename Request>
  absl::Status Authorized(grpc::ServerContextBase& context, const Request& request) const;
  // The caller (CallerOf) if the request has no unknown fields and the
  // policy lets it make this call (Acquire, Renew, Release, Campaign,
  // Proclaim, Resign), else why not.
  template <typename Request>
  absl::StatusOr<Caller> AllowedCaller(grpc::ServerContextBase& context,
                                       const Request& request) const;
  // The manager's arguments for `request`, made by ArgsFor (RenewArgsFor,
  // ProclaimArgsFor, ...) for the caller AllowedCaller admits; or why not.
  template <auto ArgsFor, typename Request>
  std::invoke_result_t<decltype(ArgsFor), const Request&, const TokenSigner*,
                       const LockLimits&, const Caller&>
  AllowedArgs(grpc::ServerContextBase& context, const Request& request) const {
    absl::StatusOr<Caller> caller = AllowedCaller(context, request);
    if (!caller.ok()) return caller.status();
    return ArgsFor(request, signer_, manager_->limits(), *caller);
  }
  // The manager's callback for a unary call answered on `reply`: `fill`
  // makes the response of a result; then the call finishes with the
  // result's status.
  template <typename Result, typename Fill>
  static auto Answer(UnaryReply* reply, Fill fill) {
    return [reply, fill = std::move(fill)](absl::StatusOr<Result> result) {
      if (result.ok()) fill(*result);
      reply->Finish(result.status());
    };
  }
  // Hands `args` (or their error) to the manager's Acquire as a new call,
  // answers on `reply` with `response` (an Acquire's or a Campaign's), and
  // cancels the call if its client goes away.
  void StartAcquire(absl::StatusOr<AcquireArgs> args,
                    fencegate::v1::AcquireResponse* response, UnaryReply* reply);
  // Acquire with `resources` set (several at once), likewise.
  void AcquireMany(const fencegate::v1::AcquireRequest& request, const Caller& caller,
                   fencegate::v1::AcquireResponse* response, UnaryReply* reply);

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

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_CALLS_H_
