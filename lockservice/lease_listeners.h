// LeaseListeners: the LockManager's index of which listeners
// (lease_listener.h) hear when which lease ends, kept apart from the leases
// themselves. A listener is added once (a Session stream when it starts)
// and from then on listens to the leases its calls acquire or renew, until
// it is removed (the stream ends) or the lease ends.
//
// Invariant: a lease lists a listener iff that listener lists the lease,
// and only listeners that were added (and not removed since) are listed. So
// removing a listener leaves no lease pointing at it, a call of a listener
// already removed (a parked Acquire granted after its stream ended)
// registers nothing, and a lease's end finds exactly its listeners.
//
// Leases are named by their token alone: tokens are unique over all grants
// (a reentrant acquire keeps its lease's token). The manager forgets every
// listener (RemoveAll) whenever it rebuilds its state, the only time a
// token that nobody saw may be drawn again.
//
// Holds listeners by pointer, without a reference: a listener is alive while
// added (it removes itself before it goes) and while a call of it is in
// the manager (the call's callback holds a reference).
//
// Thread safety: none; the LockManager guards it with its mutex.
#ifndef FENCEGATE_LOCKSERVICE_LEASE_LISTENERS_H_
#define FENCEGATE_LOCKSERVICE_LEASE_LISTENERS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "lockservice/lease_listener.h"

namespace fencegate::lockservice {

class LeaseListeners {
 public:
  using Listeners = absl::InlinedVector<LeaseListener*, 2>;

  // Adds `listener`; no effect if it is added already.
  void Add(LeaseListener* listener);
  // Removes `listener` and its registrations; no effect if it is not added.
  void Remove(LeaseListener* listener);
  // Removes every listener; returns them.
  std::vector<LeaseListener*> RemoveAll();

  // `listener` hears when the lease `token` ends. No effect if `listener`
  // is not added, or listens to that lease already.
  void Listen(LeaseListener* listener, uint64_t token);
  // The lease `token` ended: forgets it and returns its listeners, in the
  // order they began to listen.
  Listeners End(uint64_t token);

  // Whether no lease has a listener, so a lease's end has nothing to look
  // up: the grant and release paths test this first.
  bool NoLeases() const { return by_lease_.empty(); }
  size_t listener_count() const { return by_listener_.size(); }
  size_t lease_count() const { return by_lease_.size(); }
  // OK when the invariant holds; INTERNAL naming the first breach (tests).
  absl::Status CheckInvariant() const;

 private:
  absl::flat_hash_map<uint64_t, Listeners> by_lease_;
  absl::flat_hash_map<LeaseListener*, absl::flat_hash_set<uint64_t>> by_listener_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LEASE_LISTENERS_H_
