#include "lockservice/core/wait_queue.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace fencegate::lockservice {
// Named, not anonymous: WaitQueue::Indexes (external linkage) holds these
// types, and in a unity build this file is not the main file of its unit.
namespace wait_queue_internal {

struct RequestKey {
  absl::string_view holder;
  absl::string_view request_id;
};

inline RequestKey KeyOf(WaitQueue::iterator w) { return {w->holder, w->request_id}; }
inline RequestKey KeyOf(const RequestKey& key) { return key; }

// The index by (holder, request id) holds the waiters' iterators and
// hashes and compares the names they point at: no copy of either.
struct RequestHash {
  using is_transparent = void;
  template <typename T>
  size_t operator()(const T& t) const {
    const RequestKey key = KeyOf(t);
    return absl::HashOf(key.holder, key.request_id);
  }
};
struct RequestEq {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const RequestKey x = KeyOf(a), y = KeyOf(b);
    return x.holder == y.holder && x.request_id == y.request_id;
  }
};

inline size_t HolderHash(absl::string_view holder) { return absl::HashOf(holder); }

}  // namespace wait_queue_internal

using wait_queue_internal::HolderHash;
using wait_queue_internal::RequestEq;
using wait_queue_internal::RequestHash;
using wait_queue_internal::RequestKey;

struct WaitQueue::Indexes {
  absl::flat_hash_set<iterator, RequestHash, RequestEq> by_request;
  absl::flat_hash_map<size_t, uint32_t> waiters_of;  // by HolderHash

  void Add(iterator w) {
    if (w->seq != 0) by_request.insert(w);
    ++waiters_of[HolderHash(w->holder)];
  }
  void Remove(iterator w) {
    if (w->seq != 0) by_request.erase(w);
    auto count = waiters_of.find(HolderHash(w->holder));
    if (--count->second == 0) waiters_of.erase(count);
  }
};

WaitQueue::WaitQueue() = default;
WaitQueue::~WaitQueue() = default;

WaitQueue::iterator WaitQueue::Link(iterator place, Waiter w) {
  auto it = waiters_.insert(place, std::move(w));
  if (indexes_ != nullptr) {
    indexes_->Add(it);
  } else if (waiters_.size() > kIndexFrom) {
    indexes_ = std::make_unique<Indexes>();
    for (auto each = waiters_.begin(); each != waiters_.end(); ++each)
      indexes_->Add(each);
  }
  return it;
}

void WaitQueue::Unlink(iterator w) {
  if (indexes_ != nullptr) indexes_->Remove(w);
  waiters_.erase(w);
}

std::optional<WaitQueue::iterator> WaitQueue::Find(absl::string_view holder,
                                                   absl::string_view request_id) {
  const RequestKey key{holder, request_id};
  if (indexes_ != nullptr) {
    auto it = indexes_->by_request.find(key);
    if (it == indexes_->by_request.end()) return std::nullopt;
    return *it;
  }
  for (auto w = waiters_.begin(); w != waiters_.end(); ++w) {
    if (w->seq != 0 && RequestEq()(w, key)) return w;
  }
  return std::nullopt;
}

bool WaitQueue::MayHaveWaitersOf(absl::string_view holder) const {
  if (indexes_ != nullptr) return indexes_->waiters_of.contains(HolderHash(holder));
  for (const Waiter& w : waiters_) {
    if (w.holder == holder) return true;
  }
  return false;
}

}  // namespace fencegate::lockservice
