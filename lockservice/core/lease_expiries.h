// LeaseExpiries: every lease the lock manager holds, by its expiry, and the
// one clock timer for the earliest (the manager's OnExpiryTimer ends the
// leases due). A lease is in it exactly while it is held, so its size is
// the number of leases held.
//
// Thread safety: none; LockManager::mu_ guards it. The timer's callback is
// the manager's, run on the clock's thread.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LEASE_EXPIRIES_H_
#define FENCEGATE_LOCKSERVICE_CORE_LEASE_EXPIRIES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"
#include "lockservice/core/deadline_index.h"
#include "lockservice/core/deadline_timer.h"
#include "lockservice/core/resource_state.h"

namespace fencegate::lockservice {

// When a lease granted at `lease.acquired_at` and extended at `now` for
// `ttl` expires: now + ttl, but no later than acquired_at + `max_hold`
// (0: no cap).
absl::Time CappedExpiry(const HeldLease& lease, absl::Duration ttl, absl::Time now,
                        absl::Duration max_hold);

class LeaseExpiries {
 public:
  // `set_timer(at)` arms a clock timer for `at` that runs the manager's
  // expiry callback and returns its id (DeadlineTimer).
  LeaseExpiries(Clock* clock, absl::AnyInvocable<Clock::TimerId(absl::Time)> set_timer)
      : timer_(clock, std::move(set_timer)) {}

  // Adds `lease`, held on the resource whose key in the manager's table is
  // `key` (stable while the lease is held), under its expiry.
  void Add(const std::string& key, const HeldLease& lease);
  // Moves `lease`'s expiry, and its entry here, to `expiry`.
  void Move(HeldLease& lease, absl::Time expiry);
  // Takes `lease` out (no-op if absent); cancels the timer when the last
  // lease goes.
  void Remove(const HeldLease& lease) { Remove(lease.expiry, lease.token); }
  // Takes out the entry Due() returned.
  void Remove(const DeadlineIndex::Entry& due) { Remove(due.deadline, due.id); }
  // Forgets every lease (the manager reloads them); the timer stays armed
  // and finds nothing due.
  void Clear() { index_.Clear(); }

  // The lease with the earliest expiry, if it is due at `now` (it stays
  // here until removed); otherwise an entry whose resource is null.
  DeadlineIndex::Entry Due(absl::Time now) const { return index_.Due(now); }
  // The timer's callback calls Fired() first, and Arm() once nothing is
  // due (DeadlineTimer).
  void Fired() { timer_.Fired(); }
  void Arm() { timer_.Arm(index_); }

  // The leases held.
  size_t size() const { return index_.size(); }

 private:
  void Remove(CompactTime expiry, uint64_t token);

  DeadlineIndex index_;  // the id of an entry is its lease's token
  DeadlineTimer timer_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LEASE_EXPIRIES_H_
