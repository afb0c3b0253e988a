// EtcdLockStore: LockStore in an etcd cluster, for one term of one leader
// (leader_election.h). Several lock-service instances share the cluster;
// only the leader of the current term has a store that can commit.
//
// Keys, under `prefix` (fencegate-lockservice --etcd_prefix):
//   <prefix>leader            the leader key (LeaderElection), value = address
//   <prefix>token             the last issued token, decimal
//   <prefix>lease/<resource>  one LeaseRow (lock_records.proto) per held
//                             exclusive lease
//   <prefix>hold/<token>      one HoldRow per shared lease or permit, the
//                             token as 20 decimal digits (a resource may
//                             have many; each is put or deleted by token)
//   <prefix>fence/<position>  value = resource: its fence position, the
//                             position as 20 decimal digits, so key order is
//                             position order and ScanFencePositions() is one
//                             Range. One key per resource: moving a position
//                             deletes the old key in the same txn (the store
//                             keeps each resource's position in memory; only
//                             the leader writes, so that copy is exact).
//   <prefix>wait/<seq>        one WaiterRow per persisted parked Acquire, the
//                             seq as 20 digits: key order is arrival order.
//   <prefix>format            the state format, decimal (see below)
//
// State format (common/core/state_format.h, docs/upgrades.md): the keys above
// are format 1, what 0.1.0 wrote (without <prefix>format: no marker).
// Load() reads the marker with the rest. A newer format ends the term with
// FAILED_PRECONDITION naming both formats, having written nothing; an
// older one, or none, is migrated after the load in one guarded txn that
// writes the marker too (format 1 changes no key: the txn only writes the
// marker). CheckEtcdStateFormat() is the same check outside any term, for
// the server's start.
//
// Fencing. Every call is an etcd txn guarded by
//   create_revision(<prefix>leader) == guard.create_revision
// so a leader whose term ended (lease expired while it was paused, say)
// can neither write nor read as leader any more. Commit() is one txn: the
// guard, then the counter and every lease, hold, waiter and fence row of
// the batch. An EMPTY batch is a barrier: a guarded txn that writes nothing
// and reads the leader key, proving that this term still leads, so a reply
// decided from memory is not stale. (etcd answers a txn that contains no
// Range from the member's local state, serializably, even with compares;
// the Range makes it a linearizable read.) Load() reads the counter and the
// first page of rows in one guarded txn, and further pages at that txn's
// revision, so it sees one consistent snapshot taken while this term led.
//
// A failed or refused call ENDS THE TERM: the store refuses every later call
// at once, and `on_term_lost` runs once (the instance steps down and a
// leader loads the state afresh). A call that timed out may still have been
// applied: the error says the outcome is unknown, and the next leader sees
// whichever happened. Errors are UNAVAILABLE (DATA_LOSS for a row that does
// not parse, or names a mode this version does not know).
//
// Limits: one batch is one txn, and etcd refuses txns of more than
// --max-txn-ops operations (default 128) or --max-request-bytes (1.5 MiB),
// so the lock server caps the manager's batch (kEtcdMaxOpsPerItem, and
// docs/operations-etcd.md, "etcd settings").
//
// REQUIRES: Load() succeeded before the first Commit() (LockManager does so).
//
// Thread safety: as LockStore asks: Load() and Commit() from one thread at a
// time; ScanFencePositions() (a plain linearizable Range, also after the
// term ended) and EndTerm() from any thread. `on_term_lost` runs on the caller's thread.
// Ownership: `client` must outlive the store.
#ifndef FENCEGATE_LOCKSERVICE_ETCD_ETCD_LOCK_STORE_H_
#define FENCEGATE_LOCKSERVICE_ETCD_ETCD_LOCK_STORE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "common/core/state_format.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/leader_election.h"

namespace fencegate::lockservice {

struct EtcdLockStoreOptions {
  std::string prefix = "/fencegate/lockservice/";
  // Deadline of one Commit() (all its attempts) and of one Load().
  absl::Duration commit_timeout = absl::Seconds(5);
  absl::Duration load_timeout = absl::Seconds(30);
  // Rows per Range while loading.
  int64_t load_page = 1000;
};

// The key LeaderElection campaigns for, under `prefix`.
std::string EtcdLeaderKey(const std::string& prefix);

// The key of the state format under `prefix`.
std::string EtcdFormatKey(const std::string& prefix);

// Reads the state format under `prefix` once, in no term: OK when it is
// this version's, older, or absent; FAILED_PRECONDITION when newer
// (NewerStateFormatError), DATA_LOSS when the key holds no format; the
// client's error (UNAVAILABLE, DEADLINE_EXCEEDED) when etcd did not answer
// by `deadline`. Writes nothing.
absl::Status CheckEtcdStateFormat(etcd::EtcdClient& client, const std::string& prefix,
                                  absl::Time deadline);

// etcd operations one item of a group-commit batch may add to its txn: a
// fence move is a put and a delete; an exclusive lease row, a hold (shared
// lease or permit, by token) or a waiter row is one put or delete. A batch
// of n items is at most 2 + kEtcdMaxOpsPerItem * n operations (the counter,
// or the barrier's read, and a spare).
inline constexpr int kEtcdMaxOpsPerItem = 2;

class EtcdLockStore final : public LockStore {
 public:
  // The state format this version writes, and the newest it reads.
  static constexpr int64_t kStateFormat = 2;

  EtcdLockStore(etcd::EtcdClient* client, EtcdLockStoreOptions options,
                LeaderGuard guard,
                absl::AnyInvocable<void(const absl::Status&)> on_term_lost);

  absl::StatusOr<LockStoreState> Load() override;
  absl::Status Commit(const LockStoreBatch& batch) override;
  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(
      uint64_t after, size_t limit) override;

  // Refuses every later call (the term is over). Idempotent.
  void EndTerm() { ended_.store(true); }

  // What the last successful Load() found of the state's format and made
  // of it. REQUIRES: not concurrent with Load().
  const StateFormatAtOpen& format_at_open() const { return format_at_open_; }

 private:
  etcdserverpb::TxnRequest GuardedTxn() const;
  // Ends the term for `why` and returns the error to report.
  absl::Status Lose(absl::Status why);
  absl::Status Ended() const;
  std::string FenceKey(uint64_t position) const;
  std::string WaitKey(uint64_t seq) const;
  std::string HoldKey(uint64_t token) const;
  // Migrates the state loaded in format `marked` (nullopt: no marker) to
  // kStateFormat and writes the marker, in one guarded txn.
  absl::Status Migrate(std::optional<int64_t> marked, absl::Time deadline);
  // Reads every key under `prefix` at `revision`, from `first` (the first
  // page, already read) on, calling `row` for each.
  absl::Status LoadRows(const std::string& prefix, int64_t revision,
                        etcdserverpb::RangeResponse first, absl::Time deadline,
                        absl::FunctionRef<absl::Status(const mvccpb::KeyValue&)> row);
  absl::Status ParseLease(const mvccpb::KeyValue& kv, LockStoreState& state) const;
  absl::Status ParseHold(const mvccpb::KeyValue& kv, LockStoreState& state) const;
  absl::Status ParseWaiter(const mvccpb::KeyValue& kv, LockStoreState& state) const;

  etcd::EtcdClient* const client_;
  const EtcdLockStoreOptions options_;
  const LeaderGuard guard_;
  const std::string token_key_;
  const std::string lease_prefix_;
  const std::string fence_prefix_;
  const std::string wait_prefix_;
  const std::string hold_prefix_;
  const std::string format_key_;
  absl::AnyInvocable<void(const absl::Status&)> on_term_lost_;
  std::atomic<bool> ended_{false};
  // The counter as this term last loaded or committed it: only this term
  // writes it, so a batch that does not raise it leaves it alone.
  uint64_t committed_token_ = 0;
  bool loaded_ = false;
  // Each resource's committed fence position (Load() and Commit() only).
  absl::flat_hash_map<std::string, uint64_t> fence_positions_;
  StateFormatAtOpen format_at_open_;  // Load() only
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_ETCD_ETCD_LOCK_STORE_H_
