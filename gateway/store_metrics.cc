#include "gateway/store_metrics.h"

#include <optional>
#include <string>

#include "common/base/errors.h"

namespace fencegate::gateway {
namespace {

constexpr const char* kRpcNames[] = {"write", "read", "fence", "list", "describe"};
constexpr const char* kResultNames[] = {"ok",
                                        "stale_token",
                                        "version_mismatch",
                                        "bad_signature",
                                        "invalid_argument",
                                        "unavailable",
                                        "resource_exhausted",
                                        "other"};
constexpr const char* kSourceNames[] = {"write", "read", "fence", "feed"};
constexpr const char* kStageNames[] = {"apply", "commit", "read"};

}  // namespace

StoreMetrics StoreMetrics::Register(metrics::Registry& registry, StaleRefusals* stale,
                                    bool count_raises) {
  StoreMetrics m;
  m.stale = stale;
  auto& requests = registry.AddCounter(
      "fencegate_gateway_requests_total",
      "Gateway requests answered, unary and Session calls alike, by RPC (MultiWrite "
      "counts as write) and result.",
      {"rpc", "result"});
  for (int rpc = 0; rpc < kRpcs; ++rpc) {
    for (int result = 0; result < kResults; ++result) {
      m.requests[rpc][result] = &requests.Get({kRpcNames[rpc], kResultNames[result]});
    }
  }
  if (count_raises) {
    auto& raises = registry.AddCounter(
        "fencegate_gateway_fence_raises_total",
        "Fences raised (a token above the resource's fence accepted), by source: a "
        "write, a fenced read, a Fence call, or the grant-time feed from the lock "
        "service.",
        {"source"});
    for (int source = 0; source < kSources; ++source) {
      m.fence_raises[source] = &raises.Get({kSourceNames[source]});
    }
  }
  m.stale_refused_in_memory =
      &registry
           .AddCounter("fencegate_gateway_stale_refused_in_memory_total",
                       "Stale fenced requests refused by the gateway's fence cache, "
                       "at once, without a transaction (also counted in "
                       "fencegate_gateway_requests_total).",
                       {})
           .Get({});
  m.commit_batch_size = &registry
                             .AddHistogram("fencegate_gateway_commit_batch_size",
                                           "Fenced requests in one storage commit "
                                           "(group commit).",
                                           metrics::BatchBounds())
                             .Get();
  m.commit_seconds =
      &registry
           .AddHistogram("fencegate_gateway_commit_seconds",
                         "Time of one storage commit (SQLite: one fsync; PostgreSQL: "
                         "COMMIT), in seconds.",
                         metrics::LatencyBounds())
           .Get();
  auto& errors = registry.AddCounter(
      "fencegate_gateway_storage_errors_total",
      "Storage failures: apply (one request failed and was undone), commit (a batch "
      "did not commit), read (a committed read failed).",
      {"stage"});
  for (int stage = 0; stage < kStages; ++stage) {
    m.storage_errors[stage] = &errors.Get({kStageNames[stage]});
  }
  return m;
}

StoreMetrics::Result StoreMetrics::ResultOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kOk;
    case absl::StatusCode::kAborted: {
      std::optional<ErrorInfo> info = GetErrorInfo(status);
      if (info && info->reason == ErrorReason::kStaleToken) return kStaleToken;
      if (info && info->reason == ErrorReason::kVersionMismatch) return kVersionMismatch;
      return kOther;
    }
    case absl::StatusCode::kPermissionDenied:
      return kBadSignature;
    case absl::StatusCode::kInvalidArgument:
      return kInvalidArgument;
    case absl::StatusCode::kUnavailable:
      return kUnavailable;
    case absl::StatusCode::kResourceExhausted:
      return kResourceExhausted;
    default:
      return kOther;
  }
}

}  // namespace fencegate::gateway
