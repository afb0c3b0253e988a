// EtcdSession: one etcd lease that this process keeps alive, and what the
// process can prove about it on its own monotonic clock.
//
// etcd expires a lease TTL after the last keep-alive it received. The
// process cannot see that moment, only when it SENT each keep-alive, which
// is earlier. So the session counts as alive until
//
//   alive_until = (send time of the last acknowledged keep-alive, or of the
//                  grant) + granted TTL - margin
//
// on the injected Clock, where the margin (a tenth of the TTL, at least
// 100 ms) absorbs clock rate differences between this host and etcd's
// leader. etcd never expires a lease earlier than that: a new etcd leader
// even extends every lease (lessor.Promote). Once `alive_until` passes
// without a newer acknowledgement, or etcd answers that the lease is gone,
// the session is lost for good: alive() turns false and `on_lost` runs
// once. A lost session is not revived; make a new one.
//
// Keep-alives go out every TTL / 3 (as etcd's Go client does), from a
// thread of the session, and are retried quickly (other members included,
// see EtcdClient) after a failure.
//
// Thread safety: thread-safe. `on_lost` runs on the clock's timer thread or
// the keep-alive thread with no lock of the session held; it must not block
// or destroy the session. After the destructor returns it no longer runs.
// Ownership: `client` and `clock` must outlive the session.
#ifndef FENCEGATE_LOCKSERVICE_ETCD_ETCD_SESSION_H_
#define FENCEGATE_LOCKSERVICE_ETCD_ETCD_SESSION_H_

#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/base/monotonic_wait.h"
#include "fencegate/clock.h"
#include "lockservice/etcd/etcd_client.h"

namespace fencegate::lockservice {

class EtcdSession {
 public:
  // Grants a lease of `ttl` (etcd may raise it to its minimum, about 1.5
  // election timeouts) within `timeout`, and starts keeping it alive.
  static absl::StatusOr<std::unique_ptr<EtcdSession>> Start(
      etcd::EtcdClient* client, Clock* clock, absl::Duration ttl,
      absl::Duration timeout, absl::AnyInvocable<void()> on_lost);
  // Stops the keep-alives. The lease is not revoked: it expires by itself.
  ~EtcdSession();
  EtcdSession(const EtcdSession&) = delete;
  EtcdSession& operator=(const EtcdSession&) = delete;

  int64_t lease_id() const { return lease_id_; }
  absl::Duration ttl() const { return ttl_; }  // as granted

  bool alive();
  absl::Time alive_until();

  // Revokes the lease, so etcd deletes its keys at once (a leader that
  // steps down frees the leader key for the next one). Best effort, within
  // `timeout`. The session is lost afterwards; `on_lost` does not run.
  void Revoke(absl::Duration timeout);

 private:
  struct Lifeline {
    absl::Mutex mu;
    EtcdSession* session ABSL_GUARDED_BY(mu) = nullptr;
  };

  EtcdSession(etcd::EtcdClient* client, Clock* clock, int64_t lease_id,
              absl::Duration ttl, absl::Time granted_at,
              absl::AnyInvocable<void()> on_lost);

  absl::Time AliveUntil(absl::Time sent) const { return sent + ttl_ - margin_; }
  void ArmTimer(absl::Time at);
  void OnTimer();
  void KeepAliveLoop();
  // Marks the session lost; runs on_lost (outside mu_) if `notify`.
  void Lose(const std::string& why, bool notify);

  etcd::EtcdClient* const client_;
  Clock* const clock_;
  const int64_t lease_id_;
  const absl::Duration ttl_;
  const absl::Duration margin_;
  const std::shared_ptr<Lifeline> lifeline_;

  absl::Mutex mu_;
  MonotonicWait wake_;  // stopping_ or lost_ changed
  absl::Time alive_until_ ABSL_GUARDED_BY(mu_);
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void()> on_lost_ ABSL_GUARDED_BY(mu_);
  std::thread keeper_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_ETCD_ETCD_SESSION_H_
