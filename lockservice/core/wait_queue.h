// LockManager's wait queues (docs/design.md, "The lock manager"): a parked
// Acquire (Waiter), and one resource's queue of them (WaitQueue), which
// owns the FIFO list and its two indexes, so the three change together:
//   - by (holder, request id): a retry of a parked or loaded call finds its
//     place (only waiters with a request id, that is with a persisted place,
//     are in it);
//   - how many waiters each holder has (by the hash of its name): a grant
//     finds the new holder's other parked calls without scanning a queue
//     where it has none.
// The indexes are built only once the queue is longer than kIndexFrom; a
// shorter queue is scanned. A resource has a WaitQueue only while somebody
// waits on it (Resource::queue), so a held lease with nobody queued pays one
// pointer for it, and a queue of one waiter no hash table.
//
// Thread safety: none; LockManager::mu_ guards every queue. Iterators stay
// valid until their waiter is unlinked.
#ifndef FENCEGATE_LOCKSERVICE_CORE_WAIT_QUEUE_H_
#define FENCEGATE_LOCKSERVICE_CORE_WAIT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/compact_time.h"
#include "lockservice/core/lock_calls.h"

namespace fencegate::lockservice {

struct Waiter {
  // Its call's LockManager::CallId; 0: loaded from the store, its client has
  // not come back.
  uint64_t id = 0;
  std::string holder;
  absl::Duration ttl;
  std::string request_id;
  Callback<AcquireResult> done;
  CompactTime deadline;  // when its wait ends: its key in the wait index
  uint64_t seq = 0;      // its persisted place; 0: not persisted (no request id)
  LeaseListener* listener = nullptr;  // the parked call's (AcquireArgs)
  CompactTime parked_at;              // when its call parked (for the wait-time metric)
  LeaseMode mode = LeaseMode::kExclusive;  // what it waits for (AcquireArgs)
  // One of a parked AcquireMany's places (the manager's ParkedCalls has
  // the call and its callback; `done` is empty): never persisted.
  bool many = false;
  uint32_t permits = 0;
  // A parked Campaign's value (AcquireArgs::campaign); null otherwise, and
  // for a loaded waiter until its client's retry brings it again.
  std::unique_ptr<std::string> campaign = nullptr;
};

class WaitQueue {
 public:
  using iterator = std::list<Waiter>::iterator;
  // Longest queue served by scanning it; a longer one builds its indexes.
  static constexpr size_t kIndexFrom = 8;

  WaitQueue();
  ~WaitQueue();

  bool empty() const { return waiters_.empty(); }
  size_t size() const { return waiters_.size(); }
  iterator begin() { return waiters_.begin(); }
  iterator end() { return waiters_.end(); }
  Waiter& front() { return waiters_.front(); }

  // Puts `w` before `place` (end(): last) and indexes it.
  iterator Link(iterator place, Waiter w);
  // Takes `w` out of the queue and its indexes.
  void Unlink(iterator w);
  // The waiter with a persisted place parked by `holder` with `request_id`.
  std::optional<iterator> Find(absl::string_view holder, absl::string_view request_id);
  // False: `holder` has no waiter here. True: it may have (a hash of its
  // name is counted; a collision with another holder's says true).
  bool MayHaveWaitersOf(absl::string_view holder) const;

 private:
  struct Indexes;

  std::list<Waiter> waiters_;         // FIFO
  std::unique_ptr<Indexes> indexes_;  // null while size() <= kIndexFrom
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_WAIT_QUEUE_H_
