// LockSession: one lock-service Session stream (lock.proto, rpc Session),
// without gRPC: a StreamSession (common/core/stream_session.h: reading, bounds,
// answer coalescing, the end of the stream) whose calls are Acquire, Renew,
// Release and Describe, each handed to the LockManager, and a LeaseListener
// (lease_listener.h) that pushes each end of a lease it listens to as a
// LeaseLost. Over gRPC it runs in a StreamReactor
// (common/server/stream_reactor.h); the tests and the fuzz target drive it on a
// fake transport. docs/semantics.md, "The session stream", is the user's view.
//
// Calls. Each is handled as its unary call would be (lock_requests.h: same
// validation, signature checks, caller identity, limits, codes and
// ErrorDetail) and gets exactly one answer, its response or its status. A
// refused call fails alone; the stream stays open. Calls are decided in the
// order sent; answers go out when their commit is done, so a parked Acquire
// is answered when it is granted or its wait runs out, while later calls
// are answered meanwhile.
//
// Pushes. The stream listens to every lease that one of its calls acquires
// (also reentrantly) or renews successfully: when such a lease expires, or
// is released by a call that did not come over this stream, a LeaseLost
// follows once its end has committed, after the answer that granted it.
//
// The end. Besides StreamSession's ends: the manager stopping (it shuts
// down, its term ends, or it rebuilt its state after a failed commit) ends
// the stream with UNAVAILABLE once the calls in flight are answered. A
// cancelled stream cancels its parked Acquires. Leases stay as they are
// whichever way the stream ends: they run until their TTL unless renewed
// (on another stream, which then listens to them).
//
// Ownership: as StreamSession, and LeaseListener's references are the
// same count; every call in the manager, and every end the manager has yet
// to tell, holds one. The session shares the manager until the transport is
// done (then it stops listening and lets go), so the manager is never
// destroyed by the last reference to a session, which may drop on the
// thread committing the manager's batch; a session that commits a batch on
// its own thread (StreamSession, "Run to completion") holds the manager
// until that commit is done. `signer` and `authorizer` (either may be null)
// must outlive it.
//
// Thread safety: as StreamSession; pushes come on the thread that commits
// the batch recording the lease's end.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/authz/authorizer.h"
#include "common/core/stream_session.h"
#include "common/core/stream_transport.h"
#include "common/core/token_signer.h"
#include "lockservice/core/lease_listener.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_requests.h"
#include "lockservice/core/lock_session_wire.h"

namespace fencegate::lockservice {

class LockSession final : public StreamSession, public LeaseListener {
 public:
  // A session on `transport`, reading its first message, for `caller`; each
  // call is first checked against `authorizer` (null: no policy;
  // lock_call_authz.h) for the caller's subject. If
  // `caller` is an error (a forwarded stream that names no caller) or the
  // manager takes no listener (it shuts down), the stream ends at once with
  // that status.
  static LockSession* Start(std::shared_ptr<LockManager> manager,
                            const TokenSigner* signer, absl::StatusOr<Caller> caller,
                            const StreamLimits& limits, StreamTransport* transport,
                            const authz::Authorizer* authorizer = nullptr);

  // One reference count for both bases.
  void Ref() override { StreamSession::Ref(); }
  void Unref() override { StreamSession::Unref(); }

  // LeaseListener.
  void OnLeaseLost(const LeaseLoss& loss) override;
  void OnStopped(const absl::Status& why) override;

 private:
  LockSession(std::shared_ptr<LockManager> manager, const TokenSigner* signer,
              Caller caller, const StreamLimits& limits, StreamTransport* transport,
              const authz::Authorizer* authorizer)
      : StreamSession(limits, transport),
        signer_(signer),
        authorizer_(authorizer),
        caller_(std::move(caller)),
        manager_(std::move(manager)) {}
  ~LockSession() override = default;

  // StreamSession.
  absl::Status HandleMessage(absl::string_view bytes) override;
  void AppendError(uint64_t request_id, const absl::Status& status,
                   std::string* out) override;
  void OnCancelled() override;
  void OnDetached() override;

  // Admits and hands one call to the manager, or answers it at once.
  void Dispatch(LockManager& manager, const LockIncomingCall& in);
  void Acquire(LockManager& manager, uint64_t request_id,
               const fencegate::v1::AcquireRequest& request);
  // An Acquire with `resources` set (several at once).
  void AcquireMany(LockManager& manager, uint64_t request_id,
                   const fencegate::v1::AcquireRequest& request);
  void Renew(LockManager& manager, uint64_t request_id,
             const fencegate::v1::RenewRequest& request);
  void Release(LockManager& manager, uint64_t request_id,
               const fencegate::v1::ReleaseRequest& request);
  void Describe(LockManager& manager, uint64_t request_id,
                const fencegate::v1::DescribeRequest& request);
  // The election calls (election_requests.h). A Campaign is an Acquire:
  // both start through StartAcquire, which listens to the lease granted.
  void Campaign(LockManager& manager, uint64_t request_id,
                const fencegate::v1::CampaignRequest& request);
  void StartAcquire(LockManager& manager, uint64_t request_id, AcquireArgs args);
  void Proclaim(LockManager& manager, uint64_t request_id,
                const fencegate::v1::ProclaimRequest& request);
  void Leader(LockManager& manager, uint64_t request_id,
              const fencegate::v1::LeaderRequest& request);
  void Resign(LockManager& manager, uint64_t request_id,
              const fencegate::v1::ResignRequest& request);
  // Answers an admitted call with `status` alone.
  void Refuse(uint64_t request_id, const absl::Status& status);

  // Null once the transport is done.
  std::shared_ptr<LockManager> manager();

  const TokenSigner* const signer_;
  const authz::Authorizer* const authorizer_;  // null: no policy
  const Caller caller_;

  absl::Mutex calls_mu_;
  std::shared_ptr<LockManager> manager_ ABSL_GUARDED_BY(calls_mu_);
  // The Acquire calls in flight (parked ones among them), by request_id, so
  // that a cancelled stream cancels them.
  absl::flat_hash_map<uint64_t, LockManager::CallId> acquires_ ABSL_GUARDED_BY(calls_mu_);
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_H_
