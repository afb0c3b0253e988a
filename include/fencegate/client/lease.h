// Lease: a granted lock that renews itself in the background and says
// reliably when it is lost, the way etcd's Session.Done() does. Made by
// LockClient::AcquireLease(), for a lease of any kind (mode(): exclusive,
// shared or a permit; lease_mode.h): each is renewed and released by its
// own token the same way, and lost on its own.
//
// Validity is kept on the client's monotonic clock, pessimistically: the
// lease counts as valid until (time the last acknowledged renew, or the
// acquire, was SENT) + the TTL the server granted; for an acquire that
// waited in line, + the time the server says it waited (AcquireOutcome::
// waited: from the call's arrival to its grant). The server measures its
// expiry from later (when it handled the call), so the client gives up no
// later than the server does, clock rates aside.
//
// Renewal: no thread per lease. A timer on the lease's clock (Clock::RunAt:
// one timer thread for every lease on that clock) renews every
// ttl * renew_fraction, less up to a tenth of that at random so that leases
// taken together spread out, rounded up to a tick (a tenth of that, at most
// 100 ms) so that the renewals falling due close together go out together
// ("extend to" now + ttl), each one asynchronous call
// (LockClient::RenewAsync: on the Session stream, which carries the calls
// made while it writes in one message; unary when the client's calls are).
// A renewal that fails for any reason but a refusal is sent again soon (a
// quarter of the interval, at most 200 ms later) while the lease is valid.
// The lease is lost, for good, as soon as
//   - a renew is refused (ABORTED, LEASE_LOST), or
//   - validity passes without an acknowledged renew (server unreachable,
//     or this process was paused), or
//   - the lock service pushes that it ended the lease (its TTL ran out
//     there, or a call from elsewhere released it), when the LockClient's
//     calls are on its Session stream (ClientOptions::lock_transport, the
//     default): the lease hears it the moment the service commits the end,
//     not at its next renewal. When that stream ends the lease renews at
//     once on the next one, which then listens to it. A push is only a
//     faster way to learn: the renewals and the validity above still decide
//     (a push that came before the Lease was made is learnt at the next
//     renewal).
// Then lost() is true, Check() returns the LEASE_LOST error, on_lost runs
// once, and WaitLost() returns.
//
// Being "valid" here is advisory: a paused process can resume and write
// after it lapsed. The gateway's token check is what makes that write
// harmless; always write through it with this lease's token (an exclusive
// lease's: a shared lease's token reads, fenced, and a permit's is not
// taken by the gateway).
//
// Thread safety: thread-safe. The destructor stops renewing (it waits for
// a renewal step or answer being handled; the answer of a renewal still in
// flight is dropped when it comes) and releases the lease unless Release()
// ran or the server said the token lost it, so also a lease that only
// lapsed here (a blocking Release call, retried up to the client's
// call_timeout while the service is unreachable): it must not run on the
// on_lost callback, nor in a callback of the client's asynchronous calls.
// Ownership: the LockClient must outlive the Lease.
#ifndef FENCEGATE_CLIENT_LEASE_H_
#define FENCEGATE_CLIENT_LEASE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/client/lease_mode.h"
#include "fencegate/clock.h"
#include "fencegate/token_signature.h"

namespace fencegate {
class MonotonicWait;  // the library's own (lease.cc)
}  // namespace fencegate

namespace fencegate::client {

class LockClient;
struct RenewOutcome;        // lock_client.h
class LeaseWatch;           // client/lease_watches.h
enum class LeaseNotice;     // client/lease_watches.h

struct LeaseOptions {
  // Renew when this fraction of the TTL has passed since the last renew.
  double renew_fraction = 1.0 / 3;
  // Called once when the lease is lost (not on Release()), with the reason,
  // on whichever thread noticed first (the clock's timer thread, a gRPC
  // thread of the client that brought a renewal's refusal, or a caller of
  // lost()/Check()/Renew()). Keep it short: on the timer thread it holds up
  // every other lease's renewal on that clock. It must not destroy the
  // Lease.
  absl::AnyInvocable<void(const absl::Status&)> on_lost;
  // The clock validity is measured on; nullptr: the LockClient's
  // (ClientOptions::clock). Not owned; must outlive the Lease.
  Clock* clock = nullptr;
};

class Lease {
 public:
  // Starts renewing. `valid_until` is on the lease's clock: options.clock,
  // or the client's when that is nullptr (see the header).
  Lease(LockClient* client, std::string resource, LeaseMode mode, uint64_t token,
        TokenSignature signature, absl::Duration ttl, absl::Time valid_until,
        LeaseOptions options);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  const std::string& resource() const { return resource_; }
  // The kind of lease granted: what AcquireOptions::mode asked for.
  LeaseMode mode() const { return mode_; }
  uint64_t token() const { return token_; }
  // The token's signature (empty when the service does not sign): what
  // makes it usable at a gateway that checks signatures. The grant's at
  // first; each renewal brings the one under the service's current key.
  TokenSignature signature() const;
  absl::Duration ttl() const { return ttl_; }

  // True once the lease is lost or released.
  bool lost();
  // OK while the lease is valid; otherwise why not (ABORTED LEASE_LOST when
  // lost, FAILED_PRECONDITION after Release()).
  absl::Status Check();
  // When the lease lapses unless renewed, on options.clock.
  absl::Time valid_until();
  // Blocks until the lease is lost (and on_lost has returned) or released,
  // or `timeout` passes. Returns true if it is lost or released. Must not be
  // called from on_lost.
  bool WaitLost(absl::Duration timeout);

  // Renews now, in the caller's thread (before a long operation, say).
  absl::Status Renew();
  // Stops renewing and releases the lease on the server, also one that
  // lapsed here (a restarted service may hold it for another TTL), unless
  // the server already said the token lost it. Idempotent.
  absl::Status Release();

 private:
  // How the clock's timers and the renewals' callbacks reach the Lease,
  // and never after its destructor began (lease.cc).
  struct Anchor;

  // Sets the lease's timer for `at`, in place of the one set before.
  void ArmLocked(absl::Time at) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The timer: loses the lease if it ended; otherwise sends a renewal if
  // one is due and none is under way; then sets the timer again.
  void Step();
  // The answer to the renewal sent at `sent`.
  void Renewed(absl::Time sent, const absl::StatusOr<RenewOutcome>& outcome);
  // When the timer should next look: the renewal due, or the end of
  // validity while a renewal is under way.
  absl::Time NextLookLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Renews once, blocking; mu_ is released during the call.
  absl::Status RenewLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the lease lost if it is not yet; returns the callback to run
  // (outside mu_), if this call is the one that lost it.
  absl::AnyInvocable<void(const absl::Status&)> LoseLocked(absl::Status why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `callback` (from LoseLocked), if any, outside mu_, then wakes
  // WaitLost() and the renewer to look at the lease again.
  void Notify(absl::AnyInvocable<void(const absl::Status&)> callback,
              const absl::Status& why);
  // Loses the lease if the service pushed its end or its validity passed.
  absl::AnyInvocable<void(const absl::Status&)> CheckEndLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The watch's listener, on a gRPC thread of the Session stream: notes
  // what it heard and sets the timer for now, which acts on it.
  void Hear(LeaseNotice notice);
  bool Ended() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !ended_.ok(); }

  LockClient* const client_;
  const std::string resource_;
  const LeaseMode mode_;
  const uint64_t token_;
  const absl::Duration ttl_;
  const double renew_fraction_;
  Clock* const clock_;

  mutable absl::Mutex mu_;
  const std::unique_ptr<MonotonicWait> wake_;  // stopping_, ended_ or notifying_ changed
  TokenSignature signature_ ABSL_GUARDED_BY(mu_);
  absl::Time valid_until_ ABSL_GUARDED_BY(mu_);
  absl::Time next_renew_ ABSL_GUARDED_BY(mu_);
  // OK while the lease is live; then why it ended (lost or released).
  absl::Status ended_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Release() has run; the server said the token no longer holds the lease
  // (a lease that only lapsed here may still be held there, and Release()
  // still releases it).
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool server_dropped_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void(const absl::Status&)> on_lost_ ABSL_GUARDED_BY(mu_);
  // on_lost was handed out and has not returned yet.
  bool notifying_ ABSL_GUARDED_BY(mu_) = false;
  // Heard on the Session stream: the lease's end, as the error it is lost
  // with (OK: none); and that the stream ended, so renew now.
  absl::Status pushed_end_ ABSL_GUARDED_BY(mu_);
  bool renew_now_ ABSL_GUARDED_BY(mu_) = false;
  // The timer set, and whether an asynchronous renewal is under way.
  Clock::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
  bool renewing_ ABSL_GUARDED_BY(mu_) = false;
  const std::shared_ptr<Anchor> anchor_;
  // Listening from the end of the constructor to the start of the
  // destructor; null when the client's calls are unary.
  std::unique_ptr<LeaseWatch> watch_;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LEASE_H_
