// LeaseMode: what kind of hold a lease is (docs/semantics.md, "Kinds of
// lock"). A resource is used in one way at a time: as a read-write lock
// (exclusive and shared leases) or as a semaphore of N permits; an Acquire
// of the other kind while it is in use is INVALID_ARGUMENT.
//
//   kExclusive  one holder, no other lease on the resource (the default);
//   kShared     any number of shared holders, no exclusive one;
//   kPermit     one of the resource's N permits (a semaphore).
//
// Every lease, of every kind, has its own token from the one counter.
#ifndef FENCEGATE_LOCKSERVICE_LEASE_MODE_H_
#define FENCEGATE_LOCKSERVICE_LEASE_MODE_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace fencegate::lockservice {

// The values are persisted (SQLite, etcd) and sent (proto LeaseMode): never
// renumber.
enum class LeaseMode : uint8_t { kExclusive = 0, kShared = 1, kPermit = 2 };

// "exclusive", "shared", "permit": for messages and logs.
inline absl::string_view LeaseModeName(LeaseMode mode) {
  switch (mode) {
    case LeaseMode::kExclusive:
      return "exclusive";
    case LeaseMode::kShared:
      return "shared";
    case LeaseMode::kPermit:
      return "permit";
  }
  return "unknown";
}

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LEASE_MODE_H_
