// LeaseMode: the kind of lease a client asks for and holds
// (docs/semantics.md, "Kinds of lock"). A resource is used in one way at a
// time: as a read-write lock (kExclusive and kShared) or as a semaphore of
// N permits (kPermit).
//
//   kExclusive  one holder, no other lease on the resource (the default);
//               its token may write at the gateway;
//   kShared     any number of shared holders and no exclusive one; its
//               token may read at the gateway (a fenced read), not write;
//   kPermit     one of the resource's N permits (a semaphore).
#ifndef FENCEGATE_CLIENT_LEASE_MODE_H_
#define FENCEGATE_CLIENT_LEASE_MODE_H_

namespace fencegate::client {

enum class LeaseMode { kExclusive = 0, kShared = 1, kPermit = 2 };

// "exclusive", "shared", "permit": as the CLI's --json and the torture
// histories write it.
inline const char* LeaseModeName(LeaseMode mode) {
  switch (mode) {
    case LeaseMode::kShared:
      return "shared";
    case LeaseMode::kPermit:
      return "permit";
    case LeaseMode::kExclusive:
      break;
  }
  return "exclusive";
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LEASE_MODE_H_
