#include "gateway/fence_cache.h"

namespace fencegate::gateway {

uint64_t FenceCache::Floor(absl::string_view resource) const {
  if (capacity_ == 0) return 0;
  absl::MutexLock lock(&mu_);
  auto it = floors_.find(resource);
  return it != floors_.end() ? it->second : 0;
}

void FenceCache::Learn(absl::string_view resource, uint64_t fence) {
  if (capacity_ == 0 || fence == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = floors_.find(resource);
  if (it != floors_.end()) {
    if (fence > it->second) it->second = fence;
    return;
  }
  if (floors_.size() >= capacity_) floors_.clear();
  floors_.emplace(resource, fence);
}

size_t FenceCache::size() const {
  absl::MutexLock lock(&mu_);
  return floors_.size();
}

}  // namespace fencegate::gateway
