// LeaseMode: what kind of hold a lease is (docs/semantics.md, "Kinds of
// lock"), the one definition the client library, both servers, their
// stores and the token signatures use. A resource is used in one way at a
// time: as a read-write lock (kExclusive and kShared) or as a semaphore of
// N permits (kPermit); an Acquire of the other kind while it is in use is
// INVALID_ARGUMENT.
//
//   kExclusive  one holder, no other lease on the resource (the default);
//               its token may write, fence and read at the gateway, and
//               its signature covers exactly the bytes it did before lease
//               kinds existed, so old signatures stay valid;
//   kShared     any number of shared holders and no exclusive one; its
//               token may only read at the gateway (a fenced read that
//               does not raise the fence); its signature covers the mode;
//   kPermit     one of the resource's N permits (a semaphore); the gateway
//               refuses its token; its signature covers the mode.
//
// Every lease, of every kind, has its own token from the one counter.
//
// The values are the wire's (fencegate.v1.LeaseMode in token.proto; each
// side converts at its edge and checks the values there with
// static_assert), and they are persisted (the SQLite and etcd lock stores)
// and signed: never renumber.
//
// Thread safety: a value type and pure functions.
#ifndef FENCEGATE_LEASE_MODE_H_
#define FENCEGATE_LEASE_MODE_H_

#include <cstdint>
#include <optional>

namespace fencegate {

enum class LeaseMode : uint8_t { kExclusive = 0, kShared = 1, kPermit = 2 };

// "exclusive", "shared", "permit": for messages and logs, the CLI's --json
// and the torture histories.
inline const char* LeaseModeName(LeaseMode mode) {
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

// The mode a number names (a request's fencegate.v1.LeaseMode, an open enum
// in which any int32 arrives; a stored row's column), or nullopt for a
// number this version does not know. Each caller says what that means: a
// request is refused with INVALID_ARGUMENT naming `mode`, a stored row is
// DATA_LOSS.
inline std::optional<LeaseMode> LeaseModeFromNumber(int64_t number) {
  switch (number) {
    case static_cast<int64_t>(LeaseMode::kExclusive):
      return LeaseMode::kExclusive;
    case static_cast<int64_t>(LeaseMode::kShared):
      return LeaseMode::kShared;
    case static_cast<int64_t>(LeaseMode::kPermit):
      return LeaseMode::kPermit;
    default:
      return std::nullopt;
  }
}

}  // namespace fencegate

#endif  // FENCEGATE_LEASE_MODE_H_
