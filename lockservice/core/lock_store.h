// LockStore: the durable half of the lock service. It keeps exactly what must
// survive a crash: the last issued fencing token, one row per held lease
// (holder, token, ttl, holds, recent request ids, and for an election's
// leader its value), per resource its fence
// position (the newest grant's token or expiry mark; see FencePosition), and
// the parked Acquires that carry a request id, in arrival order (so a
// restart, or a new leader, keeps the wait queues' order). Deadlines and
// lock-delays live only in memory (LockManager).
//
// The model is etcd's as much as SQLite's: a counter key and lease keys,
// changed together by one atomic transaction per batch. A store never
// interprets leases; LockManager decides, the store only persists.
//
// Thread safety: Load() and Commit() need not be thread-safe: LockManager
// calls Load() before serving (and to recover) and Commit() from one thread
// at a time (its group commit's: common/core/group_commit.h).
// ScanFencePositions() must be thread-safe and may run concurrently with
// Commit().
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/lease_mode.h"

namespace fencegate::lockservice {

// What the leader of an election (a resource whose exclusive lease was
// taken by a Campaign: docs/semantics.md, "Elections") said last: its value
// and that value's sequence number within its term (0: the Campaign's own,
// then one more per Proclaim). The term is the lease's token.
struct Proclamation {
  uint64_t seq = 0;
  std::string value;
};

// A lease as persisted. No expiry time: after a restart every lease is held
// for its full `ttl` again (the "delay restart" rule), because the monotonic
// clock of the previous process means nothing to this one.
struct LeaseRecord {
  std::string resource;
  std::string holder;
  uint64_t token = 0;
  absl::Duration ttl;
  uint32_t hold_count = 0;
  // Its kind; for kPermit, `permits` is the semaphore's size (0 otherwise).
  LeaseMode mode = LeaseMode::kExclusive;
  uint32_t permits = 0;
  // Request ids already applied to this lease (acquire and release), newest
  // last, so retries stay idempotent across a restart.
  std::vector<std::string> request_ids;
  // An exclusive lease that leads an election: what it proclaimed.
  std::optional<Proclamation> proclamation;
};

// Where grant-time fencing puts a resource's fence: the token of the newest
// lease granted on it, or, once that lease expired, its expiry mark (a token
// drawn at expiry, so larger than the expired one and smaller than the next
// grant's). Positions are unique and, in commit order, increasing: a gateway
// that has applied every position up to p misses nothing at or below p.
struct FencePosition {
  std::string resource;
  uint64_t position = 0;
};

// A parked Acquire as persisted: where it stands in its resource's queue,
// and what its retry (same holder, same request id) needs to take that place
// back. No deadline: the retry brings its own wait.
struct WaiterRecord {
  uint64_t seq = 0;  // arrival order over every resource; unique, never 0
  std::string resource;
  std::string holder;
  absl::Duration ttl;
  std::string request_id;                  // never empty
  LeaseMode mode = LeaseMode::kExclusive;  // what it waits for, as in LeaseRecord
  uint32_t permits = 0;
};

struct LockStoreState {
  uint64_t last_token = 0;            // 0: no token was ever issued
  std::vector<LeaseRecord> leases;    // exclusive ones first, then the holds
  std::vector<WaiterRecord> waiters;  // in seq order
};

// One atomic change. `leases` maps a resource to its exclusive lease's new
// row, or to nullopt to delete the row; each resource appears at most once.
// `holds` does the same for shared leases and permits, which a resource
// may have many of, by token.
struct LockStoreBatch {
  // Raise the persisted counter to at least this (0: leave it).
  uint64_t last_token = 0;
  std::vector<std::pair<std::string, std::optional<LeaseRecord>>> leases;
  // Shared leases and permits by token: put, or delete; each token at most
  // once. The record's mode is kShared or kPermit.
  std::vector<std::pair<uint64_t, std::optional<LeaseRecord>>> holds;
  // Raise each resource's fence position to at least this; each resource
  // appears at most once. Positions are kept after the lease ends.
  std::vector<FencePosition> fence_positions;
  // Waiter rows by seq: put, or delete (nullopt); each seq at most once.
  std::vector<std::pair<uint64_t, std::optional<WaiterRecord>>> waiters;

  bool empty() const {
    return last_token == 0 && leases.empty() && holds.empty() &&
           fence_positions.empty() && waiters.empty();
  }
};

// What LockStore::LoadInto() hands over, row by row: the counter first,
// then every lease (the exclusive ones, then the shared leases and permits),
// then the waiters in seq order. It may move from the records it is given.
class LoadSink {
 public:
  virtual ~LoadSink() = default;
  virtual void OnLastToken(uint64_t last_token) = 0;
  // A hint, before the leases: about this many follow.
  virtual void ExpectLeases(size_t /*count*/) {}
  // Every lease of every mode (exclusive leases, shared leases, permits).
  virtual void OnLease(LeaseRecord& lease) = 0;
  virtual void OnWaiter(WaiterRecord& waiter) = 0;
};

class LockStore {
 public:
  virtual ~LockStore() = default;

  // Everything committed so far.
  virtual absl::StatusOr<LockStoreState> Load() = 0;
  // The same, handed to `sink` as it is read, so that a million rows are
  // never held twice (the lock manager restores from it). On error, `sink`
  // may have seen part of the state. The default calls Load(); a store
  // that can read row by row overrides it.
  virtual absl::Status LoadInto(LoadSink& sink) {
    absl::StatusOr<LockStoreState> state = Load();
    if (!state.ok()) return state.status();
    sink.OnLastToken(state->last_token);
    sink.ExpectLeases(state->leases.size());
    for (LeaseRecord& lease : state->leases) sink.OnLease(lease);
    for (WaiterRecord& waiter : state->waiters) sink.OnWaiter(waiter);
    return absl::OkStatus();
  }

  // Applies the whole batch atomically and durably, or nothing: on error the
  // stored state is what it was before the call. The counter never goes
  // down, nor does any fence position.
  //
  // An empty batch carries replies that changed nothing (a Describe, a
  // refused try-lock). A store whose writer can be deposed (etcd) proves
  // with it that the writer still is the writer, so the replies are not
  // stale; a store with one writer for good (SQLite) returns OK at once.
  virtual absl::Status Commit(const LockStoreBatch& batch) = 0;

  // Committed fence positions greater than `after`, in increasing order, at
  // most `limit` of them. Thread-safe (see above); never sees a commit in
  // progress.
  virtual absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(uint64_t after,
                                                                        size_t limit) = 0;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_STORE_H_
