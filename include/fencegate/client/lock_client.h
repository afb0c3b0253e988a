// LockClient: the lock service from C++. Its calls go on the service's
// Session stream (one per client, shared by its threads), or one gRPC call
// each (ClientOptions::lock_transport); the same semantics either way.
// Blocking calls, each with a deadline: ClientOptions::call_timeout (15 s), or one whole
// attempt if longer (a blocking Acquire: its wait plus rpc_timeout). UNAVAILABLE is
// retried until then (client_options.h) with the same request id, so a
// call made while the service restarts or fails over succeeds once it is
// back, and a retried Acquire or Release is applied once. AcquireLease()
// returns a Lease that renews itself (lease.h). When the service signs
// tokens, a grant carries its signature (AcquireOutcome::signature,
// Lease::signature()); Renew and Release must pass it back.
//
// Kinds of lock (lease_mode.h, docs/semantics.md): AcquireOptions::mode asks
// for an exclusive lease (the default), a shared one, or one of a
// semaphore's AcquireOptions::permits. A resource is used in one way at a
// time: an Acquire of the other way while it is in use, or a permit of a
// semaphore with another number of permits, is INVALID_ARGUMENT naming
// `mode` or `permits`. Every lease has its own token; Renew and Release
// work by (resource, token) for every kind.
//
// Thread safety: thread-safe; share one LockClient among threads.
// Errors: the server's status, with its ErrorInfo; see client/errors.h.
// Performance: Debian's Abseil checks every absl::Mutex acquisition for
// lock-order cycles, under one process-wide lock, unless the program turns
// it off (a few % of a busy client's CPU in a profile; no difference beyond
// noise in the bench's A/B). A program that wants it off calls
// absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore) once
// in main, as the servers and the bench's load generator do. The library
// does not: the setting is the program's.
#ifndef FENCEGATE_CLIENT_LOCK_CLIENT_H_
#define FENCEGATE_CLIENT_LOCK_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client/client_options.h"
#include "fencegate/client/election.h"
#include "fencegate/client/lease.h"
#include "fencegate/client/lease_mode.h"
#include "fencegate/client/multi_lease.h"
#include "fencegate/token_signature.h"
#include "grpcpp/channel.h"

namespace fencegate::v1 {
class AcquireRequest;  // generated (proto/fencegate/v1/lock.proto)
class AcquireResponse;
}  // namespace fencegate::v1

namespace fencegate::client {

class LeaseWatches;  // client/lease_watches.h

struct AcquireOptions {
  absl::Duration ttl = absl::Seconds(10);
  // Zero: try-lock. Otherwise wait in the resource's FIFO queue this long.
  absl::Duration wait = absl::ZeroDuration();
  // Empty: a fresh random id (retries of this call reuse it).
  std::string request_id;
  // The kind of lease. kShared: granted at once while no exclusive lease
  // is held and nobody waits (FIFO: a queued exclusive request holds back
  // later shared ones); its token reads at the gateway, it does not write.
  // kPermit: one of `permits` (1 to the server's
  // --max_holders_per_resource, default 10000), the same number for every
  // holder while the semaphore is in use.
  LeaseMode mode = LeaseMode::kExclusive;
  // With kPermit: the semaphore's size; 0 with the other kinds (anything
  // else is INVALID_ARGUMENT naming `permits`).
  uint32_t permits = 0;
};

struct AcquireOutcome {
  bool acquired = false;
  // When acquired, the lease's kind as the service granted it (what
  // AcquireOptions::mode asked for); otherwise the kind asked for.
  LeaseMode mode = LeaseMode::kExclusive;
  uint64_t token = 0;
  absl::Duration ttl;
  // When acquired after waiting in line: from the call's arrival at the
  // service to its grant (the ttl counts from the grant), by the service's
  // clock; zero when granted at once.
  absl::Duration waited;
  uint32_t hold_count = 0;
  // When acquired from a service that signs tokens; empty otherwise.
  TokenSignature signature;
  // When not acquired:
  bool lock_delay = false;    // held back after an expiry, not held
  uint64_t holder_token = 0;  // 0: nobody holds it
  absl::Duration retry_after;
};

// A multi-resource Acquire's answer (LockClient::AcquireMany).
struct MultiAcquireOutcome {
  bool acquired = false;
  // When acquired: one per resource, in the order asked.
  std::vector<AcquireOutcome> leases;
  // When not: the first resource that held it back, and why (as in
  // AcquireOutcome).
  std::string busy_resource;
  bool lock_delay = false;
  uint64_t holder_token = 0;
  absl::Duration retry_after;
};

struct RenewOutcome {
  absl::Duration ttl;  // the lease now ends this long after the renew
  // From a service that signs tokens: the token's signature under its
  // current key (changes after a key rotation); empty otherwise.
  TokenSignature signature;
};

struct LockState {
  bool held = false;
  // The exclusive lease; with shared leases or permits, the oldest of them
  // (the lowest token).
  std::string holder;
  uint64_t token = 0;
  absl::Duration remaining;
  uint32_t hold_count = 0;
  uint32_t waiters = 0;
  absl::Duration lock_delay_remaining;
  // How the resource is used: kExclusive when free or held exclusively,
  // kShared while shared leases are held, kPermit while it is a semaphore.
  LeaseMode mode = LeaseMode::kExclusive;
  uint32_t permits = 0;  // with kPermit: the semaphore's size
  uint32_t holders = 0;  // leases held: 1 exclusive, or the shared leases or permits
};

class LockClient {
 public:
  // Over an existing channel (plaintext or TLS, as the caller made it).
  explicit LockClient(std::shared_ptr<grpc::Channel> channel,
                      ClientOptions options = ClientOptions());
  ~LockClient();
  LockClient(const LockClient&) = delete;
  LockClient& operator=(const LockClient&) = delete;
  // A channel to `address` ("host:port"), with TLS if options.tls says so.
  // INVALID_ARGUMENT when the TLS files cannot be used. Connects lazily.
  static absl::StatusOr<std::unique_ptr<LockClient>> Connect(
      const std::string& address, ClientOptions options = ClientOptions());

  // Not acquired (held, wait ran out, lock-delay) is an OK outcome. A retry
  // sends what is left of options.wait, so the service never holds the call
  // longer than asked; a retry after the wait ran out is a try-lock with
  // the same request id, which takes back (and ends) the call's place in
  // the queue if the service kept it over a restart, or returns the lease
  // granted to an attempt whose answer was lost.
  absl::StatusOr<AcquireOutcome> Acquire(
      const std::string& resource, const std::string& holder,
      const AcquireOptions& options = AcquireOptions());

  // Several resources at once (docs/semantics.md, "Several resources at
  // once"): 1 to the server's --max_multi_resources (8) distinct names,
  // granted all together or not at all, each its own lease; options.mode
  // kExclusive or kShared. Retries as Acquire does, with one request id for
  // the whole set, so a retry is applied once.
  absl::StatusOr<MultiAcquireOutcome> AcquireMany(
      const std::vector<std::string>& resources, const std::string& holder,
      const AcquireOptions& options = AcquireOptions());
  // AcquireMany, each grant wrapped in a self-renewing Lease, the set in a
  // MultiLease. Not acquired: FAILED_PRECONDITION (IsNotAcquired) naming
  // the resource that held it back.
  absl::StatusOr<std::unique_ptr<MultiLease>> AcquireMultiLease(
      const std::vector<std::string>& resources, const std::string& holder,
      const AcquireOptions& options = AcquireOptions(),
      LeaseOptions lease_options = LeaseOptions());

  // Acquires and wraps the grant, of any kind, in a self-renewing Lease
  // (Lease::mode() says which). When the resource was not acquired:
  // FAILED_PRECONDITION (IsNotAcquired), CurrentToken() = the holder's token.
  absl::StatusOr<std::unique_ptr<Lease>> AcquireLease(
      const std::string& resource, const std::string& holder,
      const AcquireOptions& options = AcquireOptions(),
      LeaseOptions lease_options = LeaseOptions());

  // Extends the lease to now + ttl; returns the TTL granted (capped by the
  // server's --max_hold) and the token's current signature. ABORTED
  // (IsLeaseLost) if `token` no longer holds it. The call, retries
  // included, ends `timeout` after it starts (on the options' clock);
  // InfiniteDuration(): the client's call_timeout.
  // `mode` is the lease's kind: with signed tokens the signature binds it.
  absl::StatusOr<RenewOutcome> Renew(const std::string& resource, uint64_t token,
                                     absl::Duration ttl,
                                     absl::Duration timeout = absl::InfiniteDuration(),
                                     const TokenSignature& signature = {},
                                     LeaseMode mode = LeaseMode::kExclusive);

  // Drops one hold; returns the holds left. ABORTED (IsLeaseLost) if the
  // token does not hold the resource: nothing to release.
  absl::StatusOr<uint32_t> Release(const std::string& resource, uint64_t token,
                                   std::string request_id = "",
                                   const TokenSignature& signature = {},
                                   LeaseMode mode = LeaseMode::kExclusive);

  absl::StatusOr<LockState> Describe(const std::string& resource);

  // Asynchronous forms of Acquire and Release: each returns at once and
  // runs `done` once with what the blocking form returns. Always on the
  // Session stream (whatever lock_transport says), one attempt: an
  // UNAVAILABLE is the caller's to retry, with the same request id
  // (options.request_id; Release's `request_id`) so that it is applied
  // once. `done` runs on the library's thread (client/session_stream.h's
  // contract, as GatewayClient::WriteAsync's): it must not block or make a
  // blocking call of this client and may make further asynchronous calls;
  // it runs on the calling thread when the call is refused at once
  // (RESOURCE_EXHAUSTED: more than 64 calls queued per place in flight). A
  // call still queued for a place options.wait + rpc_timeout after it was
  // made fails DEADLINE_EXCEEDED, unsent; destroying the client first
  // answers CANCELLED. AcquireAsync gives no Lease: the caller renews and
  // releases the grant.
  using AcquireDone = absl::AnyInvocable<void(absl::StatusOr<AcquireOutcome>)>;
  void AcquireAsync(const std::string& resource, const std::string& holder,
                    const AcquireOptions& options, AcquireDone done);
  // Renew as one attempt without waiting: on the Session stream, or a
  // unary call on gRPC's callback API when lock_transport is kUnary (what
  // a Lease's renewals use, so a unary client stays unary). Its deadline
  // is rpc_timeout either way.
  using RenewDone = absl::AnyInvocable<void(absl::StatusOr<RenewOutcome>)>;
  void RenewAsync(const std::string& resource, uint64_t token, absl::Duration ttl,
                  const TokenSignature& signature, LeaseMode mode, RenewDone done);
  using ReleaseDone = absl::AnyInvocable<void(absl::StatusOr<uint32_t>)>;
  void ReleaseAsync(const std::string& resource, uint64_t token, ReleaseDone done,
                    std::string request_id = "", const TokenSignature& signature = {},
                    LeaseMode mode = LeaseMode::kExclusive);

  // ---- Elections (fencegate/client/election.h; docs/semantics.md,
  // "Elections"), on the Session stream or unary as the other calls
  // (lock_transport), retried on UNAVAILABLE as they are.
  // Campaigns for `election` as `candidate` (give each replica its own)
  // with `value`, waiting in line up to options.wait; the Leadership
  // renews itself. Not elected within the wait: FAILED_PRECONDITION
  // (IsNotAcquired), CurrentToken() = the leader's term.
  absl::StatusOr<std::unique_ptr<Leadership>> Campaign(
      const std::string& election, const std::string& candidate, const std::string& value,
      const CampaignOptions& options = CampaignOptions(),
      LeaseOptions lease_options = LeaseOptions());
  // Who leads `election` now, as committed.
  absl::StatusOr<ElectionState> Leader(const std::string& election);
  // Leadership::Proclaim and Resign, for a term held elsewhere (the CLI).
  absl::StatusOr<uint64_t> Proclaim(const std::string& election, uint64_t term,
                                    const std::string& value,
                                    const TokenSignature& signature = {});
  absl::Status Resign(const std::string& election, uint64_t term,
                      const TokenSignature& signature = {});
  // Calls `on_change` with the election's state, then with each change, in
  // (term, seq) order, until it returns false or `timeout` passes (OK then)
  // or the service refuses (its error). A stream that ends (the service
  // restarts or fails over, or this observer fell behind) is opened again,
  // resuming after the last change seen. Blocks its caller; `on_change`
  // runs on it.
  absl::Status Observe(const std::string& election,
                       absl::FunctionRef<bool(const ElectionState&)> on_change,
                       absl::Duration timeout = absl::InfiniteDuration(),
                       uint64_t after_term = 0, uint64_t after_seq = 0);

  const ClientOptions& options() const { return options_; }

 private:
  friend class Lease;
  // The generated gRPC stub and the Session stream (lock_client.cc): kept
  // out of this header, so that it needs none of the generated code.
  struct Stub;

  // RetryUnavailable over this client's channel until `deadline`, on
  // options_.clock (client/retry.h).
  absl::Status Retry(absl::Time deadline, absl::FunctionRef<absl::Status()> attempt);
  // One call of the stub's `method` (Release, Describe, Leader, ...):
  // retried (Retry) until the call's deadline (options_.rpc_timeout), each
  // attempt with what is left of it (client/lock_stub.h).
  template <typename Method, typename Request, typename Response>
  absl::Status UnaryCall(Method method, const Request& request, Response* response);
  // Fills the fields every Acquire shares but its wait from `holder` and
  // `options` (a new request id if options.request_id is empty).
  void FillAcquire(const std::string& holder, const AcquireOptions& options,
                   fencegate::v1::AcquireRequest& request);
  // Sends an Acquire (`request` names its resource or resources): fills the
  // fields every Acquire shares from `holder` and `options`, then retries
  // (Retry) until the call's deadline, each attempt with what is left of
  // options.wait.
  absl::Status SendAcquire(const std::string& holder, const AcquireOptions& options,
                           fencegate::v1::AcquireRequest& request,
                           fencegate::v1::AcquireResponse& response);
  // Where a Lease listens to what the Session stream pushes; null when the
  // client's calls are unary.
  LeaseWatches* lease_watches() const { return watches_.get(); }

  const std::shared_ptr<grpc::Channel> channel_;
  const ClientOptions options_;
  // Before stub_: the stream's reader thread tells them of pushes until
  // the stub, which holds the stream, is gone.
  const std::unique_ptr<LeaseWatches> watches_;
  const std::unique_ptr<Stub> stub_;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LOCK_CLIENT_H_
