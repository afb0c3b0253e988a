// FencedStore: the gateway's core. It validates requests, runs every fenced
// operation (Write, MultiWrite, fenced Read, Fence) through group commit on a
// StorageBackend, and turns the backend's decisions into replies. No gRPC
// types: plain structs in (requests.h), absl::StatusOr out through callbacks.
//
// Group commit. A fenced operation joins a queue (common/core/group_commit.h);
// one thread at a time takes everything queued (up to max_batch) as one
// batch, either the store's writer thread or the thread that ended an
// Arrival with FlushHere() (run to completion: in the gateway, its event
// loop at the end of each burst, common/server/commit_bursts.h): BeginBatch, Apply each
// op in arrival order (the backend makes each op's check + fence + write one
// atomic step and undoes a refused op alone), one CommitBatch (one fsync).
// Only then are the batch's replies delivered, in order. If the commit
// fails, every op of the batch fails with UNAVAILABLE ("nothing was applied;
// retry"), refusals included, since what they saw was never committed; or,
// when the backend cannot tell whether the commit took effect (a database
// connection lost during COMMIT), with UNAVAILABLE saying it may or may not
// have been applied.
//
// Stale tokens known at once. Over a backend that is the sole writer of
// its fences (SQLite; StorageBackend::SoleFenceWriter()), a FenceCache
// (fence_cache.h) keeps each resource's committed fence, learned from
// committed batches and committed reads. A fenced op whose token is below
// it is refused on the calling thread, before it is queued, with that
// fence: it would be refused in any batch, since fences only grow. Any
// other op goes to the backend, which decides; the cache never accepts.
// RaiseFence() below it is answered at once with it, the fence being past
// the position. Over PostgreSQL there is no cache: other writers move the
// fences, and a refusal must name the fence as it is, not an older one.
//
// Plain reads, List and Describe read committed state from the backend on
// the caller's thread, without waiting for any commit. They can never see an
// uncommitted batch (backend contract 5), so nothing they return can be
// undone by a crash or a failed commit.
//
// Lease modes: Write and Fence take an EXCLUSIVE lease's token only; a
// fenced Read an EXCLUSIVE one's (it raises the fence) or a SHARED one's
// (OpKind::kSharedRead: checked against the fence, never raising it).
// Anything else is INVALID_ARGUMENT naming "mode" (request_validation.h).
//
// Signed tokens: given a TokenSigner, Write, fenced Read and Fence need a
// valid signature for their resource, token and mode, checked after the
// input and before anything is queued: PERMISSION_DENIED (kBadSignature)
// otherwise, and nothing changes. RaiseFence() is the gateway's own
// (grant-time fencing) and takes no signature.
//
// Errors: INVALID_ARGUMENT for bad input (request_validation.h); ABORTED
// with ErrorInfo kStaleToken (current max token) or kVersionMismatch
// (current max token and version); UNAVAILABLE when storage fails or the
// store is shutting down; RESOURCE_EXHAUSTED past max_pending queued ops.
//
// Metrics: given a StoreMetrics (store_metrics.h), every answer is counted
// by RPC and result, stale refusals by resource class (and kept for the
// status page), raised fences by source, each commit's size and time, and
// storage errors. RaiseFence() counts only as a fence raise (source feed).
//
// Callbacks run exactly once: on the thread that commits their batch for
// fenced ops, on the calling thread for plain reads, for refusals by the
// fence cache (which reveal committed state only) and for errors that
// reveal no state (bad input, overload, shutdown). No lock of the store is
// held while a callback runs. Callbacks should be quick: the rest of the
// batch waits behind them.
//
// Thread safety: all public methods are thread-safe.
// Lifetime: `backend` and `metrics` must outlive the store. The destructor delivers every
// reply already queued.
#ifndef FENCEGATE_GATEWAY_FENCED_STORE_H_
#define FENCEGATE_GATEWAY_FENCED_STORE_H_

#include <memory>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/core/group_commit.h"
#include "common/core/token_signer.h"
#include "gateway/fence_cache.h"
#include "gateway/gateway_limits.h"
#include "gateway/requests.h"
#include "gateway/storage_backend.h"
#include "gateway/store_metrics.h"

namespace fencegate::gateway {

template <typename T>
using Callback = absl::AnyInvocable<void(absl::StatusOr<T>)>;

class FencedStore {
 public:
  // `signer` may be null: tokens are then taken unsigned. `metrics` may be
  // null: nothing is counted.
  FencedStore(StorageBackend* backend, const GatewayLimits& limits,
              const TokenSigner* signer = nullptr, const StoreMetrics* metrics = nullptr);
  ~FencedStore();
  FencedStore(const FencedStore&) = delete;
  FencedStore& operator=(const FencedStore&) = delete;

  // Puts/deletes args.mutations, all or nothing, iff args.token >= the fence
  // and every expected_version matches; the fence becomes args.token.
  void Write(WriteArgs args, Callback<WriteResult> done);
  // token 0: plain read of committed state. token > 0: fenced read, refused
  // like a stale write, else raises the fence (a SHARED token's read
  // leaves it as it is); answered after its commit.
  void Read(ReadArgs args, Callback<ReadResult> done);
  // Raises the fence to args.token; refused if stale.
  void Fence(FenceArgs args, Callback<FenceResult> done);
  // Grant-time fencing: raises the fence of `resource` to at least
  // `position`, unsigned. A fence already at or above it is not an error:
  // the reply then carries the fence as it is.
  void RaiseFence(absl::string_view resource, uint64_t position,
                  Callback<FenceResult> done);
  // Committed state, on the calling thread.
  absl::StatusOr<ListResult> List(const ListArgs& args);
  absl::StatusOr<ResourceStats> Describe(absl::string_view resource);

  // Refuses new fenced ops with UNAVAILABLE; queued ones still commit and
  // are answered. Idempotent.
  void Shutdown();

  // Announces fenced ops on their way (common/core/group_commit.h): while it is
  // held, the writer does not start a batch that is not full. Hold it while
  // handling requests just received, never while waiting for an answer.
  using Arrival = CommitArrival;
  Arrival Arriving() { return commits_->Arriving(); }

  // Fenced requests waiting to commit (for the metrics).
  size_t pending() { return commits_->Pending(); }
  // Whether the fence cache may refuse stale tokens at once: only over a
  // sole fence writer (SQLite), off with --fence_cache_resources=0, and in
  // a test build whose planted bug sits in the backend's decision (for the
  // reference models of the tests).
  bool refuses_from_memory() const { return use_fence_cache_; }

 private:
  // One fenced op waiting for, or inside, a batch.
  struct Item {
    FencedOp op;
    OpResult result;
    absl::Status status;  // the op's own outcome, valid after Apply
    bool decided = false;  // Apply returned OK: result holds the decision
    bool from_feed = false;  // RaiseFence(): grant-time fencing, not a client's
    std::variant<Callback<WriteResult>, Callback<ReadResult>, Callback<FenceResult>>
        done;
  };

  // The link seam of the torture suite's test builds. Production links
  // fenced_store_seams.cc, which says: decide through `backend` itself, with
  // the fence cache on. The test builds link tests/torture/
  // planted_gateway_bugs.cc in its place, whose wrapper of `backend` plants
  // the bug --planted_bug names; a bug planted in the backend's decision
  // turns the cache off, which would otherwise refuse, correctly, the stale
  // ops whose fence it knows before they reach the bug.
  struct TestBuild {
    std::unique_ptr<StorageBackend> backend;  // null: `backend` itself
    bool fence_cache = true;
  };
  static TestBuild TestBuildBackend(StorageBackend* backend, const FenceCache& cache);
  // Answers `item` at once if its token is below the cache's fence.
  bool RefusedByCache(Item& item);
  // What a committed batch proved of the fences.
  void LearnFences(const std::vector<Item>& batch);
  absl::Status CheckSignature(absl::string_view resource, uint64_t token, LeaseMode mode,
                              const SignatureView& signature) const;
  // Queues `item`, or answers it at once if the store is closed or full.
  void Submit(Item item);
  absl::Status Admit() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The group commit's flush: one transaction for the whole batch.
  void Flush(std::vector<Item>& batch);
  // The status the op earns from the backend's answer.
  absl::Status Decision(const Item& item, const absl::Status& applied) const;
  // Answers `item` (counting it).
  void Deliver(Item& item, absl::Status status);
  // Counts a request of `rpc` answered with `status`.
  void Count(StoreMetrics::Rpc rpc, const absl::Status& status) const;
  void CountStorageError(StoreMetrics::Stage stage) const;

  const GatewayLimits limits_;
  FenceCache fences_;
  // What TestBuildBackend() made (test builds); backend_ is its backend then.
  TestBuild test_build_;
  StorageBackend* const backend_;
  const bool use_fence_cache_;
  const TokenSigner* const signer_;  // null: unsigned tokens
  const StoreMetrics* const metrics_;  // null: not counting

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;

  // Last: its destructor flushes what is queued, using the members above.
  std::unique_ptr<GroupCommitQueue<Item>> commits_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_FENCED_STORE_H_
