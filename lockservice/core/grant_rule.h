// The grant rule: whether a new lease of one kind fits on a resource beside
// the leases it holds now (docs/design.md, "The lock manager"). A pure
// function of plain facts: LockManager::CanGrant gathers the facts of one
// resource (ResourceState::FactsFor) and applies the rule; the torture
// suite's test builds bend the facts to plant a bug and apply the same
// rule (tests/torture/planted_lock_bugs.cc), so no copy of it exists.
//
// Thread safety: plain values.
#ifndef FENCEGATE_LOCKSERVICE_CORE_GRANT_RULE_H_
#define FENCEGATE_LOCKSERVICE_CORE_GRANT_RULE_H_

#include <cstddef>
#include <cstdint>

#include "fencegate/lease_mode.h"

namespace fencegate::lockservice {

// What the rule needs to know of one resource, for one holder asking.
struct GrantFacts {
  bool exclusive_held = false;       // an exclusive lease is held...
  bool exclusive_is_askers = false;  // ...by the holder asking
  size_t shared = 0;                 // shared leases or permits held
  // Whether the resource keeps shared holds at all (shared leases, or a
  // semaphore's permits); if so, `permits` is the semaphore's size (0: the
  // shared leases of a read-write lock).
  bool has_shared_holds = false;
  uint32_t permits = 0;
  bool delayed = false;    // its lock-delay still runs
  size_t max_holders = 0;  // limits.max_holders_per_resource
};

// Whether a new lease of `mode` may be granted now, the queue aside:
// exclusive on a free resource; shared beside other shared leases, or
// beside the asker's own exclusive lease (a downgrade), up to max_holders;
// a permit while fewer than the semaphore's permits are held. No new
// exclusive or shared lease while a lock-delay runs.
inline bool GrantAllowed(LeaseMode mode, const GrantFacts& f) {
  switch (mode) {
    case LeaseMode::kExclusive:
      return !f.exclusive_held && f.shared == 0 && !f.delayed;
    case LeaseMode::kShared:
      return (!f.exclusive_held || f.exclusive_is_askers) && f.shared < f.max_holders &&
             !f.delayed;
    case LeaseMode::kPermit:
      return f.has_shared_holds && f.shared < f.permits;
  }
  return false;
}

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_GRANT_RULE_H_
