// DeadlineIndex: entries ordered by deadline, so the lock manager arms one
// clock timer for the earliest of many (DeadlineTimer, deadline_timer.h),
// not one per entry. It keeps two:
// every held lease by its expiry (the id is the lease's token), and every
// parked Acquire by the end of its wait (the id is the call's id). A clock
// timer per entry cost ~220 bytes (the clock's map node and id index, and
// two heap-allocated closures); an entry here costs ~30 (24 bytes and the
// btree's slack).
//
// An entry is (deadline, id) -> the resource's name, a pointer to the key
// of the manager's resource table (stable while the resource is in it). The
// manager's invariant: an entry is in the index under exactly its current
// (deadline, id) while its lease is held or its call parked, and leaves
// before its resource can leave the table.
//
// Thread safety: none; the lock manager's mu_ guards it.
#ifndef FENCEGATE_LOCKSERVICE_CORE_DEADLINE_INDEX_H_
#define FENCEGATE_LOCKSERVICE_CORE_DEADLINE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "lockservice/core/compact_time.h"

namespace fencegate::lockservice {

class DeadlineIndex {
 public:
  void Add(CompactTime deadline, uint64_t id, const std::string* resource) {
    entries_.emplace(Key(deadline, id), resource);
  }
  // No-op when absent.
  void Remove(CompactTime deadline, uint64_t id) { entries_.erase(Key(deadline, id)); }
  // Moves the entry (from, id) to (to, id), keeping its resource.
  // REQUIRES: the entry is in the index.
  void Move(CompactTime from, uint64_t id, CompactTime to) {
    auto node = entries_.extract(Key(from, id));
    node.key() = Key(to, id);
    entries_.insert(std::move(node));
  }
  void Clear() { entries_.clear(); }

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // The earliest deadline; InfiniteFuture() when empty.
  absl::Time Earliest() const {
    return entries_.empty() ? absl::InfiniteFuture()
                            : entries_.begin()->first.first.get();
  }
  struct Entry {
    CompactTime deadline;
    uint64_t id = 0;
    const std::string* resource = nullptr;  // null: no entry
  };
  // The entry with the earliest deadline, if that is at or before `now` (it
  // stays in the index); otherwise one whose resource is null.
  Entry Due(absl::Time now) const {
    if (entries_.empty() || now < entries_.begin()->first.first.get()) return Entry{};
    const auto& [key, resource] = *entries_.begin();
    return Entry{key.first, key.second, resource};
  }

 private:
  using Key = std::pair<CompactTime, uint64_t>;
  absl::btree_map<Key, const std::string*> entries_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_DEADLINE_INDEX_H_
