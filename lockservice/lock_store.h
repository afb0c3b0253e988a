// LockStore: the durable half of the lock service. It keeps exactly what must
// survive a crash: the last issued fencing token, and one row per held lease
// (holder, token, ttl, holds, recent request ids). Waiters, deadlines and
// lock-delays live only in memory (LockManager).
//
// The model is etcd's as much as SQLite's: a counter key and lease keys,
// changed together by one atomic transaction per batch. A store never
// interprets leases; LockManager decides, the store only persists.
//
// Thread safety: implementations need not be thread-safe. LockManager calls
// Load() once before serving and Commit() from its single writer thread.
#ifndef FENCEGATE_LOCKSERVICE_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_LOCK_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fencegate::lockservice {

// A lease as persisted. No expiry time: after a restart every lease is held
// for its full `ttl` again (the "delay restart" rule), because the monotonic
// clock of the previous process means nothing to this one.
struct LeaseRecord {
  std::string resource;
  std::string holder;
  uint64_t token = 0;
  absl::Duration ttl;
  uint32_t hold_count = 0;
  // Request ids already applied to this lease (acquire and release), newest
  // last, so retries stay idempotent across a restart.
  std::vector<std::string> request_ids;
};

struct LockStoreState {
  uint64_t last_token = 0;  // 0: no token was ever issued
  std::vector<LeaseRecord> leases;
};

// One atomic change. `leases` maps a resource to its new row, or to nullopt
// to delete the row; each resource appears at most once.
struct LockStoreBatch {
  // Raise the persisted counter to at least this (0: leave it).
  uint64_t last_token = 0;
  std::vector<std::pair<std::string, std::optional<LeaseRecord>>> leases;

  bool empty() const { return last_token == 0 && leases.empty(); }
};

class LockStore {
 public:
  virtual ~LockStore() = default;

  // Everything committed so far.
  virtual absl::StatusOr<LockStoreState> Load() = 0;

  // Applies the whole batch atomically and durably, or nothing: on error the
  // stored state is what it was before the call. The counter never goes down.
  virtual absl::Status Commit(const LockStoreBatch& batch) = 0;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LOCK_STORE_H_
