// FenceCache: a lower bound of each resource's committed fence, in memory,
// so that FencedStore refuses a stale token at once: no transaction, no
// wait for a commit, no storage read (fenced_store.h).
//
// It decides refusals only, never acceptances:
//   - It learns only fences that are committed: the results of a batch
//     whose commit succeeded, and committed reads. So every value it holds
//     was at or below the storage's fence when learned, and since a fence
//     never goes down (storage_backend.h), it stays a lower bound: after a
//     failed or unknown commit, from which it learned nothing; after a
//     crash.
//   - A token below the bound is stale for sure. A token at or above it
//     proves nothing: the op goes to storage, whose transaction decides.
//   - A restart starts it empty: it fills again from storage's answers.
// A refusal names the bound as the resource's fence, which it is only
// where this process is the sole writer of the fences (SQLite): then every
// fence that moves, moves in a batch this process commits and learns from
// before it answers anyone. Beside other writers (PostgreSQL's other
// gateways, SQL-fenced transactions) the bound can lag the fence, and a
// refusal naming it would name a fence older than one already acknowledged
// (the torture's fence-never-below-acknowledged-token caught exactly that),
// so FencedStore keeps no cache there (StorageBackend::SoleFenceWriter()).
// The backends keep the whole decision (docs/gateway-internals.md, "The fence cache").
//
// Bounded: at most `capacity` resources; adding one more starts it over,
// empty (forgetting costs only early refusals). Capacity 0: off, Floor()
// is always 0 and Learn() keeps nothing.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_GATEWAY_FENCE_CACHE_H_
#define FENCEGATE_GATEWAY_FENCE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace fencegate::gateway {

class FenceCache {
 public:
  explicit FenceCache(size_t capacity) : capacity_(capacity) {}
  FenceCache(const FenceCache&) = delete;
  FenceCache& operator=(const FenceCache&) = delete;

  // The largest committed fence of `resource` learned, 0 if none.
  uint64_t Floor(absl::string_view resource) const;
  // `fence` is committed for `resource` (or was, and has only grown since).
  void Learn(absl::string_view resource, uint64_t fence);

  size_t capacity() const { return capacity_; }
  // Resources known now.
  size_t size() const;

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, uint64_t> floors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_FENCE_CACHE_H_
