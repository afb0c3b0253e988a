// LeaseListener: whoever wants to hear, the moment it is committed, that a
// lease ended: a lock-service Session stream (lock_session.h), which pushes
// it to its client. LockManager calls it; lease_listeners.h is the
// manager's index of who listens to which lease.
//
// A lease ends by expiring (its TTL or --max_hold ran out on the server's
// clock) or by the release of its last hold. A listener hears of the end
// after the batch that records it has committed, on the thread that
// committed it (common/core/group_commit.h, "Who flushes"), in
// the order the manager decided, so after the reply that granted the lease
// (decided earlier) and before any reply decided later.
//
// Ownership: reference counted by the listener itself; the manager takes a
// reference (Ref) for each end it has decided and not yet told, and drops it
// (Unref) after telling, on that thread, with no lock of the manager
// held.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENER_H_
#define FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace fencegate::lockservice {

// How a lease ended.
enum class LeaseEnd {
  kReleased,  // its last hold was released
  kExpired,   // its TTL (or the --max_hold cap) ran out
};

struct LeaseLoss {
  std::string resource;
  uint64_t token = 0;
  LeaseEnd why = LeaseEnd::kExpired;
};

class LeaseListener {
 public:
  virtual void Ref() = 0;
  virtual void Unref() = 0;
  // A lease this listener listens to ended (committed). On the commit
  // thread, with no lock of the manager held; must not block.
  virtual void OnLeaseLost(const LeaseLoss& loss) = 0;
  // The manager will tell this listener nothing more, and why: it shuts
  // down, or it rebuilt its state from the store after a failed commit.
  // No lock of the manager held.
  virtual void OnStopped(const absl::Status& why) = 0;

 protected:
  ~LeaseListener() = default;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LEASE_LISTENER_H_
