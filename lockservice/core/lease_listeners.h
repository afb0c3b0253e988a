// LeaseListeners: the LockManager's registry of who hears when which lease
// ends (lease_listener.h). A listener is added once (a Session stream when
// it starts) and from then on listens to the leases its calls acquire or
// renew, until it is removed (the stream ends) or the lease ends.
//
// Where the registrations live: each added listener gets a ListenerId,
// never reused in the registry's life. A lease keeps the id of its first
// listener in a field of its own (one word: a lease almost always has at
// most one listener, the stream that acquired it); any further listeners
// of the same lease are kept here, by the lease's token. Removing a
// listener forgets its id only: leases that still name it name nobody, and
// a later Listen on such a lease replaces it. So a held lease costs one
// word whether or not anybody listens, and removing a stream with a
// million leases costs nothing per lease.
//
// Invariants: End returns exactly the lease's listeners that are still
// added, each once, in the order they began to listen; a lease's `first`
// is 0 iff nobody listened since its last End, and then it has no entry
// here; a call of a listener that was never added or was removed (a
// parked Acquire granted after its stream ended) registers nothing.
//
// Leases are named by their token: tokens are unique over all grants (a
// reentrant acquire keeps its lease's token). The manager empties the
// registry (TakeAll) whenever it rebuilds its leases, whose `first` then
// starts at 0.
//
// Holds listeners by pointer, without a reference: a listener is alive while
// added (it removes itself before it goes) and while a call of it is in
// the manager (the call's callback holds a reference).
//
// Thread safety: none; the LockManager guards it with its mutex.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENERS_H_
#define FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENERS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "lockservice/core/lease_listener.h"

namespace fencegate::lockservice {

// An added listener's number; 0 is nobody.
using ListenerId = uint64_t;

class LeaseListeners {
 public:
  using Listeners = absl::InlinedVector<LeaseListener*, 2>;

  // Adds `listener`; no effect if it is added already.
  void Add(LeaseListener* listener);
  // Removes `listener`; no effect if it is not added.
  void Remove(LeaseListener* listener);
  // Removes every listener and registration; returns the listeners, each
  // with a reference taken (StopListeners drops it): each may be removing
  // itself on another thread as soon as the manager's mutex is released.
  std::vector<LeaseListener*> TakeAll();

  // `listener` hears when the lease `token`, whose first-listener field is
  // `first`, ends. No effect if `listener` is not added, or listens to that
  // lease already.
  void Listen(LeaseListener* listener, uint64_t token, ListenerId& first);
  // The lease `token` ended: returns its listeners (see the invariants)
  // and forgets them; `first` becomes 0.
  Listeners End(uint64_t token, ListenerId& first);

  size_t listener_count() const { return by_id_.size(); }
  // Leases with more than one listener registered (tests).
  size_t shared_lease_count() const { return more_.size(); }
  // OK when the registry is consistent; INTERNAL naming the first breach.
  absl::Status CheckInvariant() const;

 private:
  bool Live(ListenerId id) const { return id != 0 && by_id_.contains(id); }

  ListenerId next_id_ = 1;
  absl::flat_hash_map<LeaseListener*, ListenerId> ids_;
  absl::flat_hash_map<ListenerId, LeaseListener*> by_id_;
  // A lease's listeners after its first, in the order they began to listen.
  absl::flat_hash_map<uint64_t, absl::InlinedVector<ListenerId, 2>> more_;
};

// Tells each of `listeners` that it stopped, and why, and drops the
// reference taken on each when they were taken out of the registry
// (LeaseListeners::TakeAll). Call it without the manager's mutex: a
// listener may call the manager from OnStopped.
void StopListeners(std::vector<LeaseListener*> listeners, const absl::Status& why);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENERS_H_
