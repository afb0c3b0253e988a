// LeaseWatches: the Leases of one LockClient that listen to what the lock
// service's Session stream pushes (lock.proto, LeaseLost; docs/semantics.md,
// "The session stream"). The stream's reader thread reports each pushed
// end of a lease, and each end of the stream itself; every Lease watching
// that (resource, token) hears of it at once, rather than at its next
// renewal.
//
// A watch is only a faster way to learn: what a Lease promises comes from
// its renewals and its own validity (lease.h), which go on as before. So a
// push that came before its Lease started watching (the grant's answer and
// the push in one breath) is learnt at the next renewal, which the lock
// service refuses.
//
// Thread safety: thread-safe. Listeners run on the stream's reader thread
// with this registry's lock held: they must be quick, must not block and
// must not add or drop a watch. Once a LeaseWatch is destroyed its listener
// is never called again.
#ifndef FENCEGATE_CLIENT_LEASE_WATCHES_H_
#define FENCEGATE_CLIENT_LEASE_WATCHES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace fencegate::client {

// What the lock service's stream tells a watching Lease.
enum class LeaseNotice {
  // Pushed: the lease's TTL ran out on the server. Final.
  kExpired,
  // Pushed: its last hold was released by a call from elsewhere. Final.
  kReleased,
  // The stream ended: nothing more is pushed about the lease until it is
  // renewed on the next stream, which then listens to it.
  kStreamEnded,
};

class LeaseWatches;

// One Lease's watch: listening from Watch() until destroyed.
class LeaseWatch {
 public:
  ~LeaseWatch();
  LeaseWatch(const LeaseWatch&) = delete;
  LeaseWatch& operator=(const LeaseWatch&) = delete;

 private:
  friend class LeaseWatches;
  using Listener = absl::AnyInvocable<void(LeaseNotice)>;
  LeaseWatch(LeaseWatches* watches, std::string resource, uint64_t token,
             Listener listener)
      : watches_(watches),
        resource_(std::move(resource)),
        token_(token),
        listener_(std::move(listener)) {}

  LeaseWatches* const watches_;
  const std::string resource_;
  const uint64_t token_;
  Listener listener_;  // called with watches_->mu_ held
};

class LeaseWatches {
 public:
  LeaseWatches() = default;
  LeaseWatches(const LeaseWatches&) = delete;
  LeaseWatches& operator=(const LeaseWatches&) = delete;

  // Calls `listener` with what is heard of the lease (resource, token)
  // until the returned watch is destroyed. The registry must outlive it.
  std::unique_ptr<LeaseWatch> Watch(std::string resource, uint64_t token,
                                    absl::AnyInvocable<void(LeaseNotice)> listener);

  // From the stream's reader: the lease ended (kExpired or kReleased).
  void Ended(const std::string& resource, uint64_t token, LeaseNotice notice);
  // From the stream's reader: the stream ended; every watch hears it.
  void StreamEnded();

 private:
  friend class LeaseWatch;
  using Key = std::pair<std::string, uint64_t>;

  void Drop(LeaseWatch* watch);

  absl::Mutex mu_;
  // Several watches per lease: a reentrant acquire makes a second Lease
  // with the same token.
  absl::flat_hash_map<Key, std::vector<LeaseWatch*>> watching_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LEASE_WATCHES_H_
