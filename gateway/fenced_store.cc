#include "gateway/fenced_store.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/base/errors.h"
#include "common/base/log.h"
#include "common/core/reply_batch.h"
#include "common/test_hooks/test_hooks.h"
#include "gateway/request_validation.h"

namespace fencegate::gateway {
namespace {

// A full disk (SqliteStorage): RESOURCE_EXHAUSTED naming it, nothing
// applied; the gateway goes on serving reads.
absl::Status DiskFullError(const absl::Status& cause) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the gateway could not store this request: ", cause.message(),
                   "; nothing of it was applied; reads are still served; retry "
                   "once space is freed"));
}

// A fenced op the backend could not apply; it was undone.
absl::Status ApplyError(const absl::Status& cause) {
  if (cause.code() == absl::StatusCode::kResourceExhausted) return DiskFullError(cause);
  return absl::UnavailableError(
      absl::StrCat("the gateway's storage failed on this request (", cause.message(),
                   "); nothing of it was applied; retry"));
}

// The batch's commit failed. UNKNOWN from the backend: it may have
// committed after all (storage_backend.h, contract 4).
absl::Status CommitError(const absl::Status& cause) {
  if (cause.code() == absl::StatusCode::kResourceExhausted) return DiskFullError(cause);
  if (cause.code() == absl::StatusCode::kUnknown) {
    return absl::UnavailableError(absl::StrCat(
        "the gateway lost its storage while committing this request (", cause.message(),
        "); it may or may not have been applied: read the key to find out, then "
        "retry if needed"));
  }
  return absl::UnavailableError(absl::StrCat("the gateway could not commit this request (",
                                             cause.message(), "); nothing was applied; retry"));
}

absl::Status ReadError(absl::string_view what, const absl::Status& cause) {
  return absl::UnavailableError(absl::StrCat(
      "the gateway could not read its storage while ", what, " (",
      cause.message(), "); retry"));
}

}  // namespace

FencedStore::FencedStore(StorageBackend* backend, const GatewayLimits& limits,
                         const TokenSigner* signer, const StoreMetrics* metrics)
    : limits_(limits),
      fences_(limits.fence_cache_resources),
      test_build_(TestBuildBackend(backend, fences_)),
      backend_(test_build_.backend != nullptr ? test_build_.backend.get() : backend),
      use_fence_cache_(test_build_.fence_cache && limits.fence_cache_resources > 0 &&
                       backend_->SoleFenceWriter()),
      signer_(signer),
      metrics_(metrics) {
  commits_ = std::make_unique<GroupCommitQueue<Item>>(
      [this](std::vector<Item>& batch) { Flush(batch); }, limits.max_batch,
      "fg-gw-commit");
}

FencedStore::~FencedStore() {
  Shutdown();
  commits_.reset();  // commits and answers everything already queued
}

void FencedStore::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
}

// ------------------------------------------------------------- operations

absl::Status FencedStore::CheckSignature(absl::string_view resource, uint64_t token,
                                         LeaseMode mode,
                                         const SignatureView& signature) const {
  if (signer_ == nullptr) return absl::OkStatus();
  return signer_->Verify(resource, token, mode, signature.key_id, signature.mac);
}

void FencedStore::Write(WriteArgs args, Callback<WriteResult> done) {
  absl::Status error = ValidateWrite(args, limits_);  // an EXCLUSIVE token
  if (error.ok()) {
    error =
        CheckSignature(args.resource, args.token, LeaseMode::kExclusive, args.signature);
  }
  if (!error.ok()) {
    Count(StoreMetrics::kWrite, error);
    done(std::move(error));
    return;
  }
  Item item;
  item.op.kind = OpKind::kWrite;
  item.op.resource = args.resource;
  item.op.token = args.token;
  item.op.mutations = std::move(args.mutations);
  item.done = std::move(done);
  Submit(std::move(item));
}

void FencedStore::Read(ReadArgs args, Callback<ReadResult> done) {
  absl::Status error = ValidateRead(args, limits_);
  if (!error.ok()) {
    Count(StoreMetrics::kRead, error);
    done(std::move(error));
    return;
  }
  if (args.token == 0) {
    absl::StatusOr<ReadResult> result = backend_->ReadCommitted(args.resource, args.key);
    if (!result.ok()) {
      CountStorageError(StoreMetrics::kReadStage);
      result = ReadError("reading the key", result.status());
    } else if (use_fence_cache_) {
      fences_.Learn(args.resource, result->max_token);
    }
    Count(StoreMetrics::kRead, result.status());
    done(std::move(result));
    return;
  }
  // Valid: EXCLUSIVE or SHARED.
  const bool shared = args.mode == static_cast<int>(LeaseMode::kShared);
  error =
      CheckSignature(args.resource, args.token,
                     shared ? LeaseMode::kShared : LeaseMode::kExclusive, args.signature);
  if (!error.ok()) {
    Count(StoreMetrics::kRead, error);
    done(std::move(error));
    return;
  }
  Item item;
  item.op.kind = shared ? OpKind::kSharedRead : OpKind::kRead;
  item.op.resource = args.resource;
  item.op.key = args.key;
  item.op.token = args.token;
  item.done = std::move(done);
  Submit(std::move(item));
}

void FencedStore::Fence(FenceArgs args, Callback<FenceResult> done) {
  absl::Status error = ValidateFence(args, limits_);  // an EXCLUSIVE token
  if (error.ok()) {
    error =
        CheckSignature(args.resource, args.token, LeaseMode::kExclusive, args.signature);
  }
  if (!error.ok()) {
    Count(StoreMetrics::kFence, error);
    done(std::move(error));
    return;
  }
  Item item;
  item.op.kind = OpKind::kFence;
  item.op.resource = args.resource;
  item.op.token = args.token;
  item.done = std::move(done);
  Submit(std::move(item));
}

void FencedStore::RaiseFence(absl::string_view resource, uint64_t position,
                             Callback<FenceResult> done) {
  FenceArgs args;
  args.resource = resource;
  args.token = position;
  absl::Status error = ValidateFence(args, limits_);
  if (!error.ok()) {
    done(std::move(error));
    return;
  }
  Item item;
  item.op.kind = OpKind::kFence;
  item.op.resource = resource;
  item.op.token = position;
  item.from_feed = true;
  // A fence already past the position is what was asked for.
  item.done = Callback<FenceResult>(
      [done = std::move(done)](absl::StatusOr<FenceResult> result) mutable {
        if (!result.ok()) {
          std::optional<ErrorInfo> info = GetErrorInfo(result.status());
          if (info && info->reason == ErrorReason::kStaleToken) {
            result = FenceResult{info->current_token};
          }
        }
        done(std::move(result));
      });
  Submit(std::move(item));
}

absl::StatusOr<ListResult> FencedStore::List(const ListArgs& args) {
  absl::Status error = ValidateList(args, limits_);
  if (!error.ok()) {
    Count(StoreMetrics::kList, error);
    return error;
  }
  const size_t limit = args.page_size == 0 ? limits_.default_page_size : args.page_size;
  absl::StatusOr<ListPage> page =
      backend_->ListCommitted(args.resource, args.page_token, limit);
  if (!page.ok()) {
    CountStorageError(StoreMetrics::kReadStage);
    error = ReadError("listing keys", page.status());
    Count(StoreMetrics::kList, error);
    return error;
  }
  Count(StoreMetrics::kList, absl::OkStatus());
  ListResult result;
  result.keys = std::move(page->keys);
  // The page token is the last key returned: the next page starts after it.
  if (page->more && !result.keys.empty()) result.next_page_token = result.keys.back().key;
  return result;
}

absl::StatusOr<ResourceStats> FencedStore::Describe(absl::string_view resource) {
  absl::Status error = ValidateResource(resource, limits_);
  if (error.ok()) {
    absl::StatusOr<ResourceStats> stats = backend_->DescribeCommitted(resource);
    if (stats.ok()) {
      Count(StoreMetrics::kDescribe, absl::OkStatus());
      return stats;
    }
    CountStorageError(StoreMetrics::kReadStage);
    error = ReadError("describing the resource", stats.status());
  }
  Count(StoreMetrics::kDescribe, error);
  return error;
}

// ----------------------------------------------------------- group commit

void FencedStore::Submit(Item item) {
  if (RefusedByCache(item)) return;
  absl::Status error;
  {
    absl::MutexLock lock(&mu_);
    error = Admit();
    if (error.ok()) {
      commits_->Submit(std::move(item));
      return;
    }
  }
  Deliver(item, std::move(error));
}

absl::Status FencedStore::Admit() {
  if (shutting_down_) {
    return absl::UnavailableError(
        "the gateway is shutting down; retry against another instance or after "
        "it restarts");
  }
  const size_t pending = commits_->Pending();
  if (pending >= limits_.max_pending) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the gateway has ", pending, " requests waiting to commit, its limit "
        "(--max_pending); retry with backoff"));
  }
  return absl::OkStatus();
}

bool FencedStore::RefusedByCache(Item& item) {
  if (!use_fence_cache_) return false;
  const uint64_t fence = fences_.Floor(item.op.resource);
  if (item.op.token >= fence) return false;
  item.result.outcome = Outcome::kStaleToken;
  item.result.max_token = fence;
  if (metrics_ != nullptr && metrics_->stale_refused_in_memory != nullptr &&
      !item.from_feed) {
    metrics_->stale_refused_in_memory->Increment();
  }
  Deliver(item, Decision(item, absl::OkStatus()));
  return true;
}

void FencedStore::LearnFences(const std::vector<Item>& batch) {
  if (!use_fence_cache_) return;
  for (const Item& item : batch) {
    if (item.decided) fences_.Learn(item.op.resource, item.result.max_token);
  }
}

void FencedStore::Flush(std::vector<Item>& batch) {
  std::vector<absl::string_view> resources;
  resources.reserve(batch.size());
  for (const Item& item : batch) resources.push_back(item.op.resource);
  absl::Status commit = backend_->BeginBatch(resources);
  if (commit.ok()) {
    for (Item& item : batch) {
      absl::Status applied = backend_->Apply(item.op, &item.result);
      item.decided = applied.ok();
      item.status = Decision(item, applied);
    }
    const auto commit_start = std::chrono::steady_clock::now();
    commit = backend_->CommitBatch();
    if (metrics_ != nullptr) {
      metrics_->commit_seconds->ObserveSince(commit_start);
      metrics_->commit_batch_size->Observe(static_cast<double>(batch.size()));
    }
    if (commit.ok()) {
      FENCEGATE_FAILPOINT("gateway.after_commit");  // test builds only
      LearnFences(batch);
    }
  } else {
    backend_->AbortBatch();
  }
  if (!commit.ok()) {
    CountStorageError(StoreMetrics::kCommit);
    LogError("gateway batch of %d requests failed to commit: %s",
             static_cast<int>(batch.size()), commit.ToString());
    commit = CommitError(commit);
  }
  // Replies only now: every one of them is about committed state. Streams
  // send the replies of one batch in one message each (reply_batch.h).
  ReplyBatch replies;
  for (Item& item : batch) {
    Deliver(item, commit.ok() ? std::move(item.status) : commit);
  }
}

absl::Status FencedStore::Decision(const Item& item,
                                   const absl::Status& applied) const {
  if (!applied.ok()) {
    CountStorageError(StoreMetrics::kApply);
    LogError("gateway storage failed on a request for resource '%s': %s",
             item.op.resource, applied.ToString());
    return ApplyError(applied);
  }
  const FencedOp& op = item.op;
  const OpResult& r = item.result;
  switch (r.outcome) {
    case Outcome::kAccepted:
      return absl::OkStatus();
    case Outcome::kStaleToken:
      return StaleTokenError(
          absl::StrCat("stale token: resource '", op.resource,
                       "' has already seen token ", r.max_token,
                       " and this request carries ", op.token,
                       "; nothing was changed. Your lease is lost: acquire the "
                       "lock again and redo the read-modify-write"),
          r.max_token);
    case Outcome::kVersionMismatch: {
      const Mutation& m = op.mutations[r.mismatch_index];
      return VersionMismatchError(
          absl::StrCat("version mismatch: key '", m.key, "' of resource '",
                       op.resource, "' is at version ", r.version,
                       " (0 = absent) but the request expected ",
                       m.expected_version.value_or(0),
                       "; nothing was changed. Read the key again and retry "
                       "the compare-and-set"),
          r.max_token, r.version);
    }
  }
  return absl::InternalError("unknown outcome");
}

void FencedStore::Count(StoreMetrics::Rpc rpc, const absl::Status& status) const {
  if (metrics_ == nullptr) return;
  metrics_->requests[rpc][StoreMetrics::ResultOf(status)]->Increment();
}

void FencedStore::CountStorageError(StoreMetrics::Stage stage) const {
  if (metrics_ != nullptr) metrics_->storage_errors[stage]->Increment();
}

void FencedStore::Deliver(Item& item, absl::Status status) {
  const OpResult& r = item.result;
  if (metrics_ != nullptr) {
    const StoreMetrics::Rpc rpc = item.op.kind == OpKind::kWrite   ? StoreMetrics::kWrite
                                  : item.op.kind == OpKind::kFence ? StoreMetrics::kFence
                                                                   : StoreMetrics::kRead;
    if (status.ok() && r.fence_raised && metrics_->fence_raises[0] != nullptr) {
      metrics_
          ->fence_raises[item.from_feed                ? StoreMetrics::kFromFeed
                         : rpc == StoreMetrics::kWrite ? StoreMetrics::kFromWrite
                         : rpc == StoreMetrics::kRead  ? StoreMetrics::kFromRead
                                                       : StoreMetrics::kFromFence]
          ->Increment();
    }
    if (!item.from_feed) {
      const StoreMetrics::Result result = StoreMetrics::ResultOf(status);
      metrics_->requests[rpc][result]->Increment();
      if (result == StoreMetrics::kStaleToken && metrics_->stale != nullptr) {
        metrics_->stale->Record(rpc == StoreMetrics::kWrite  ? StaleRefusals::kWrite
                                : rpc == StoreMetrics::kRead ? StaleRefusals::kRead
                                                             : StaleRefusals::kFence,
                                item.op.resource, item.op.token, r.max_token,
                                absl::Now());
      }
    }
  }
  switch (item.op.kind) {
    case OpKind::kWrite: {
      auto& done = std::get<Callback<WriteResult>>(item.done);
      if (!status.ok()) return done(std::move(status));
      return done(WriteResult{r.version, r.max_token});
    }
    case OpKind::kRead:
    case OpKind::kSharedRead: {
      auto& done = std::get<Callback<ReadResult>>(item.done);
      if (!status.ok()) return done(std::move(status));
      ReadResult read;
      read.found = r.found;
      read.value = std::move(item.result.value);
      read.version = r.version;
      read.max_token = r.max_token;
      return done(std::move(read));
    }
    case OpKind::kFence: {
      auto& done = std::get<Callback<FenceResult>>(item.done);
      if (!status.ok()) return done(std::move(status));
      return done(FenceResult{r.max_token});
    }
  }
}

}  // namespace fencegate::gateway
