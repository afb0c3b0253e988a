// What the gateway's core counts (docs/observability.md lists every
// metric): FencedStore bumps these where it answers, so calls of the
// unary RPCs and of Session streams count alike. No label carries a
// resource or key name; refusals for stale tokens are also recorded by
// resource class in StaleRefusals (stale_refusals.h).
//
// The struct holds pointers into a metrics::Registry, resolved once by
// Register(); a null StoreMetrics* means metrics are off.
//
// Ownership: the registry (and `stale`) must outlive every user.
// Thread safety: the pointees are thread-safe; read-only after Register().
#ifndef FENCEGATE_GATEWAY_STORE_METRICS_H_
#define FENCEGATE_GATEWAY_STORE_METRICS_H_

#include <array>

#include "absl/status/status.h"
#include "common/metrics/registry.h"
#include "gateway/stale_refusals.h"

namespace fencegate::gateway {

struct StoreMetrics {
  // The RPC a request counts under: MultiWrite is a write; a Session call
  // counts as the unary call it stands for.
  enum Rpc { kWrite, kRead, kFence, kList, kDescribe, kRpcs };
  enum Result {
    kOk,
    kStaleToken,
    kVersionMismatch,
    kBadSignature,
    kInvalidArgument,
    kUnavailable,
    kResourceExhausted,
    kOther,
    kResults
  };
  // Where a raised fence came from.
  enum Source { kFromWrite, kFromRead, kFromFence, kFromFeed, kSources };
  enum Stage { kApply, kCommit, kReadStage, kStages };

  // fencegate_gateway_requests_total{rpc, result}
  std::array<std::array<metrics::Counter*, kResults>, kRpcs> requests{};
  // fencegate_gateway_fence_raises_total{source}; null on PostgreSQL
  // (its stored function does not say whether a fence rose).
  std::array<metrics::Counter*, kSources> fence_raises{};
  // fencegate_gateway_stale_refused_in_memory_total: refused by the fence
  // cache, before any transaction (also counted in requests and stale).
  metrics::Counter* stale_refused_in_memory = nullptr;
  metrics::Histogram* commit_batch_size = nullptr;
  metrics::Histogram* commit_seconds = nullptr;
  // fencegate_gateway_storage_errors_total{stage}
  std::array<metrics::Counter*, kStages> storage_errors{};
  StaleRefusals* stale = nullptr;

  // `count_raises`: whether the backend reports fence raises.
  static StoreMetrics Register(metrics::Registry& registry, StaleRefusals* stale,
                               bool count_raises);

  // The result a request's final status stands for.
  static Result ResultOf(const absl::Status& status);
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_STORE_METRICS_H_
