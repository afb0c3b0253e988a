// The gateway's planted bugs (docs/torture.md, "Planted bugs"), in the
// torture suite's test builds only: tests/torture/CMakeLists.txt links this
// file in place of gateway/fenced_store_seams.cc. When --planted_bug names
// one of the six below, FencedStore decides through PlantedBugBackend, a
// wrapper of its real backend (SQLite or PostgreSQL); otherwise through the
// backend itself, as in production. The five bugs of the backend's decision
// turn the store's fence cache off: it would refuse the stale ops whose
// fence it knows before they reach the bug. The sixth is the cache's own.
//
// The wrapper bends the decisions through StorageBackend's own interface,
// so the backends keep no test code. A backend's fence never goes down, so
// a bug that lets a stale op in is played as the op applied at the real
// fence (the backend accepts it there and moves no fence), answered with
// the fence the buggy check went by: clients see the stale op applied, and
// the fence it reports, as they would from the bug itself.
//
// Thread safety: as StorageBackend (one write-path caller; the *Committed
// reads from any thread).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/test_hooks/test_hooks.h"
#include "gateway/fence_cache.h"
#include "gateway/fenced_store.h"
#include "gateway/storage_backend.h"

namespace fencegate::gateway {
namespace {

enum class Bug {
  // A token one below the fence is accepted as if it were the fence.
  kAcceptsMaxMinusOne,
  // The fence is checked as last committed, apart from the batch's own
  // transaction: the ops of one batch all pass against the fence as it was
  // before the batch ("W33 checks, W34 checks, W34 writes, W33 writes").
  kFenceCheckSeparateTransaction,
  // A fenced read is checked against the fence but does not raise it.
  kFencedReadNoRaise,
  // The fence lives only in memory: a restart (a new store) forgets it.
  kFenceOnlyInMemory,
  // A shared token's fenced read is served without checking the fence.
  kSharedReadUnfenced,
  // The fence cache (gateway/fence_cache.h) is trusted for acceptances too:
  // a token at or above what the cache knows is applied without the
  // backend's check. Wrong within a batch (the cache knows only committed
  // fences) and after a restart (it starts empty).
  kFenceCacheTrusted,
};

struct NamedBug {
  const char* name;
  Bug bug;
};

constexpr NamedBug kBugs[] = {
    {"gateway_accepts_max_minus_one", Bug::kAcceptsMaxMinusOne},
    {"gateway_fence_check_separate_transaction", Bug::kFenceCheckSeparateTransaction},
    {"gateway_fenced_read_no_raise", Bug::kFencedReadNoRaise},
    {"gateway_fence_only_in_memory", Bug::kFenceOnlyInMemory},
    {"gateway_shared_read_unfenced", Bug::kSharedReadUnfenced},
    {"gateway_fence_cache_trusted", Bug::kFenceCacheTrusted},
};

class PlantedBugBackend final : public StorageBackend {
 public:
  PlantedBugBackend(StorageBackend* inner, Bug bug, const FenceCache& cache)
      : inner_(inner), bug_(bug), cache_(cache) {}

  absl::Status BeginBatch(absl::Span<const absl::string_view> resources) override {
    batch_fences_.clear();
    return inner_->BeginBatch(resources);
  }

  absl::Status Apply(const FencedOp& op, OpResult* result) override {
    switch (bug_) {
      case Bug::kAcceptsMaxMinusOne: {
        absl::Status status = inner_->Apply(op, result);
        if (!status.ok() || result->outcome != Outcome::kStaleToken ||
            result->max_token != op.token + 1) {
          return status;
        }
        return ApplyAgainst(op, op.token, result);
      }
      case Bug::kFenceCheckSeparateTransaction: {
        const uint64_t committed =
            inner_->DescribeCommitted(op.resource).value_or(ResourceStats{}).max_token;
        return ApplyAgainst(op, committed, result);
      }
      case Bug::kFencedReadNoRaise: {
        if (op.kind != OpKind::kRead) return inner_->Apply(op, result);
        // Checked and read as a shared token's read is, which raises nothing,
        // and answered as a fenced read is: with its own token as the fence.
        FencedOp read = op;
        read.kind = OpKind::kSharedRead;
        absl::Status status = inner_->Apply(read, result);
        if (status.ok() && result->outcome == Outcome::kAccepted) {
          result->max_token = op.token;
        }
        return status;
      }
      case Bug::kFenceOnlyInMemory: {
        const uint64_t fence = MemoryFence(op.resource);
        absl::Status status = ApplyAgainst(op, fence, result);
        if (status.ok() && result->outcome == Outcome::kAccepted &&
            op.kind != OpKind::kSharedRead) {
          batch_fences_[std::string(op.resource)] = std::max(fence, op.token);
        }
        return status;
      }
      case Bug::kSharedReadUnfenced:
        if (op.kind != OpKind::kSharedRead) return inner_->Apply(op, result);
        return ApplyPastFence(op, result);
      case Bug::kFenceCacheTrusted:
        // The store refused what is below the cache; the rest is let in.
        return ApplyAgainst(op, cache_.Floor(op.resource), result);
    }
    return inner_->Apply(op, result);
  }

  absl::Status CommitBatch() override {
    absl::Status status = inner_->CommitBatch();
    if (status.ok()) {
      absl::MutexLock lock(&mu_);
      for (const auto& [resource, fence] : batch_fences_) fences_[resource] = fence;
    }
    batch_fences_.clear();
    return status;
  }

  bool SoleFenceWriter() const override { return inner_->SoleFenceWriter(); }
  void AbortBatch() override {
    batch_fences_.clear();
    inner_->AbortBatch();
  }

  absl::StatusOr<ReadResult> ReadCommitted(absl::string_view resource,
                                           absl::string_view key) override {
    absl::StatusOr<ReadResult> read = inner_->ReadCommitted(resource, key);
    if (read.ok() && bug_ == Bug::kFenceOnlyInMemory) {
      read->max_token = CommittedFence(resource);
    }
    return read;
  }

  absl::StatusOr<ListPage> ListCommitted(absl::string_view resource,
                                         absl::string_view after_key,
                                         size_t limit) override {
    return inner_->ListCommitted(resource, after_key, limit);
  }

  absl::StatusOr<ResourceStats> DescribeCommitted(absl::string_view resource) override {
    absl::StatusOr<ResourceStats> stats = inner_->DescribeCommitted(resource);
    if (stats.ok() && bug_ == Bug::kFenceOnlyInMemory) {
      stats->max_token = CommittedFence(resource);
    }
    return stats;
  }

 private:
  // Applies `op` even where the backend finds its token stale: once more,
  // with the token raised to the fence, which the backend accepts without
  // moving the fence.
  absl::Status ApplyPastFence(const FencedOp& op, OpResult* result) {
    absl::Status status = inner_->Apply(op, result);
    if (!status.ok() || result->outcome != Outcome::kStaleToken) return status;
    FencedOp at_fence = op;
    at_fence.token = result->max_token;
    return inner_->Apply(at_fence, result);
  }

  // Decides `op` as a check that took `fence` (at or below the real one) for
  // the resource's fence would: refused below it, otherwise applied, and
  // answered as SqliteStorage answers against that fence.
  absl::Status ApplyAgainst(const FencedOp& op, uint64_t fence, OpResult* result) {
    if (op.token < fence) {
      *result = OpResult();
      result->outcome = Outcome::kStaleToken;
      result->max_token = fence;
      return absl::OkStatus();
    }
    absl::Status status = ApplyPastFence(op, result);
    if (!status.ok()) return status;
    const bool shared = op.kind == OpKind::kSharedRead;
    if (result->outcome == Outcome::kVersionMismatch) result->max_token = fence;
    if (result->outcome == Outcome::kAccepted) {
      result->max_token = shared ? fence : op.token;
      result->fence_raised = !shared && op.token > fence;
    }
    return status;
  }

  // kFenceOnlyInMemory: the fence as this store raised it, 0 if it did not.
  uint64_t MemoryFence(absl::string_view resource) {
    auto it = batch_fences_.find(resource);
    return it != batch_fences_.end() ? it->second : CommittedFence(resource);
  }
  uint64_t CommittedFence(absl::string_view resource) {
    absl::MutexLock lock(&mu_);
    auto it = fences_.find(resource);
    return it != fences_.end() ? it->second : 0;
  }

  StorageBackend* const inner_;
  const Bug bug_;
  const FenceCache& cache_;  // the store's
  // kFenceOnlyInMemory: the fences the open batch raised (write path only),
  // and those committed.
  absl::flat_hash_map<std::string, uint64_t> batch_fences_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, uint64_t> fences_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

FencedStore::TestBuild FencedStore::TestBuildBackend(StorageBackend* backend,
                                                     const FenceCache& cache) {
  for (const NamedBug& planted : kBugs) {
    if (test_hooks::PlantedBug(planted.name)) {
      return {std::make_unique<PlantedBugBackend>(backend, planted.bug, cache),
              /*fence_cache=*/planted.bug == Bug::kFenceCacheTrusted};
    }
  }
  return {};
}

}  // namespace fencegate::gateway
