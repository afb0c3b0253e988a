// StorageBackend: where the gateway keeps objects and fences, and the one
// place that decides whether a fenced operation is accepted. SQLite is the
// embedded default (sqlite_storage.h); PostgreSQL
// (postgres/postgres_storage.h) lets several gateways share one database.
// Each keeps the same contract, so the guarantee does not depend on
// FencedStore.
//
// Data model, per resource:
//   fence     the largest token accepted so far (0 = none yet);
//   revision  grows by one on every accepted write and is never reused: the
//             resource's record (fence + revision) outlives all its keys;
//   objects   key -> (value, version), version = the revision of the write
//             that last set the key. An absent key has version 0.
//
// The contract (every backend MUST keep it):
//   1. Apply(op) is ONE atomic step: read the fence; refuse if
//      op.token < fence (kStaleToken); check every expected_version
//      (kVersionMismatch); only then raise the fence to op.token and apply
//      the op. Nothing else can run between the check and the write (the
//      backend holds its write transaction exclusively, or a lock on the
//      resource's fence until the batch ends). A kSharedRead raises
//      nothing: its check and its read see one state (one snapshot, or
//      under the same lock), so no write with a larger token can come
//      between them.
//   2. A refused op changes nothing, not even the fence. An op that fails
//      with a storage error is undone alone; the batch's other ops stand.
//      If it cannot be undone, the batch is poisoned: CommitBatch() fails.
//   3. Ops take effect in the order applied; each sees the effects of the
//      ops applied before it in the same batch (never a snapshot taken at
//      the batch's start).
//   4. CommitBatch() makes the whole batch durable as one unit, or nothing of
//      it. The caller reveals no op's result before its batch committed. A
//      backend that talks to a database server over a connection may not
//      know which of the two happened (the connection was lost during
//      COMMIT): it must then say so with an UNKNOWN status, never claim
//      that nothing was applied.
//   5. The *Committed reads see committed state only, never a batch in
//      progress.
//
// Ownership: ops hold string_views; the bytes belong to the caller and only
// need to live for the call.
//
// Thread safety: the write path (BeginBatch, Apply, CommitBatch, AbortBatch)
// is driven by one thread at a time. The *Committed reads are thread-safe
// and may run concurrently with the write path and with each other.
#ifndef FENCEGATE_GATEWAY_STORAGE_BACKEND_H_
#define FENCEGATE_GATEWAY_STORAGE_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fencegate::gateway {

// One change to one key.
struct Mutation {
  enum class Kind { kUnset, kPut, kDelete };
  absl::string_view key;
  Kind kind = Kind::kUnset;  // a backend only sees kPut or kDelete
  absl::string_view value;   // kPut
  // If set, the key's current version must equal it (0: must not exist).
  std::optional<uint64_t> expected_version;
};

enum class OpKind {
  kWrite,  // mutations, all or nothing
  kRead,   // fenced read of `key`: refused if stale, else raises the fence
  kFence,  // raise the fence only
  // A fenced read of `key` with a shared lease's token: refused like kRead
  // if op.token < fence; accepted, it changes nothing, not the fence and
  // not the revision.
  kSharedRead,
};

// A validated fenced operation: token >= 1, names within limits, for kWrite
// at least one mutation and no key twice.
struct FencedOp {
  OpKind kind = OpKind::kFence;
  absl::string_view resource;
  uint64_t token = 0;
  absl::string_view key;                       // kRead, kSharedRead
  absl::InlinedVector<Mutation, 1> mutations;  // kWrite
};

enum class Outcome { kAccepted, kStaleToken, kVersionMismatch };

// What Apply() decided. Read only after the batch committed.
struct OpResult {
  Outcome outcome = Outcome::kAccepted;
  // The fence after the op (accepted: op.token, or for kSharedRead the
  // fence as it was, <= op.token; refused: unchanged).
  uint64_t max_token = 0;
  // kWrite accepted: the new revision, now the version of every key the op
  // wrote (for a delete: the revision at which the key was deleted).
  // kRead, kSharedRead accepted: the key's version (0 = absent).
  // kVersionMismatch: the current version of the mutation at mismatch_index.
  uint64_t version = 0;
  size_t mismatch_index = 0;  // kVersionMismatch: which mutation
  bool found = false;         // kRead, kSharedRead
  std::string value;          // kRead, kSharedRead
  // kAccepted: whether the op raised the fence (op.token was above it), for
  // the metrics. Only backends that can tell set it (SQLite does;
  // PostgreSQL's stored function does not say, so it stays false there).
  bool fence_raised = false;
};

struct ReadResult {
  bool found = false;
  std::string value;
  uint64_t version = 0;  // 0 when not found
  uint64_t max_token = 0;
};

struct KeyInfo {
  std::string key;
  uint64_t version = 0;
  uint64_t size_bytes = 0;
};

struct ListPage {
  std::vector<KeyInfo> keys;  // in byte order of the key
  bool more = false;          // keys remain after the last one returned
};

struct ResourceStats {
  uint64_t max_token = 0;
  uint64_t key_count = 0;
  uint64_t total_bytes = 0;  // sum of value sizes
};

class StorageBackend {
 public:
  virtual ~StorageBackend() = default;

  // Whether this process is the only writer of the fences it stores, so
  // that a fence it committed stays the fence until it commits another.
  // SQLite: yes, one server per state file (common/core/state_lock.h).
  // PostgreSQL: no, other gateways and SQL-fenced transactions write them.
  // FencedStore keeps its fence cache only over a sole writer: a refusal
  // must name the fence as it is (fence_cache.h). Asked once, at start.
  virtual bool SoleFenceWriter() const { return false; }

  // ------------------------------------------------------------ write path
  // Opens the batch's write transaction. `resources`: the resources the
  // batch's ops will touch (any order, repeats allowed; FencedStore names
  // them all). A backend shared by several writers may lock them up front,
  // in one global order, so that concurrent batches cannot deadlock. It is
  // a hint for that only: Apply() must stay correct for any op, named here
  // or not.
  virtual absl::Status BeginBatch(absl::Span<const absl::string_view> resources) = 0;
  // Decides and applies `op` as one atomic step (contract 1-3). Returns OK
  // with result->outcome saying accepted or why refused; a non-OK status
  // means a storage failure, and then the op changed nothing.
  virtual absl::Status Apply(const FencedOp& op, OpResult* result) = 0;
  // Makes the batch durable (one fsync). On error no transaction stays open
  // and nothing of the batch is applied, except with code UNKNOWN: then the
  // outcome is unknown, the batch may or may not be durable (contract 4).
  virtual absl::Status CommitBatch() = 0;
  // Drops the open batch, if any. Never fails in a way the caller can act on.
  virtual void AbortBatch() = 0;

  // ------------------------------------------------------------- read path
  // Committed state only (contract 5). An unknown resource reads as empty
  // with max_token 0.
  virtual absl::StatusOr<ReadResult> ReadCommitted(absl::string_view resource,
                                                   absl::string_view key) = 0;
  // At most `limit` keys greater than `after_key` ("" = from the first).
  virtual absl::StatusOr<ListPage> ListCommitted(absl::string_view resource,
                                                 absl::string_view after_key,
                                                 size_t limit) = 0;
  virtual absl::StatusOr<ResourceStats> DescribeCommitted(
      absl::string_view resource) = 0;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_STORAGE_BACKEND_H_
