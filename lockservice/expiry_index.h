// ExpiryIndex: every held lease's expiry in one structure ordered by
// deadline, so the lock manager arms one clock timer, for the earliest, not
// one per lease. A per-lease timer cost ~220 bytes of a held lease (the
// clock's map node and id index, and two heap-allocated closures holding a
// copy of the resource's name); an entry here costs ~30 (24 bytes and the
// btree's slack).
//
// An entry is (expiry, token) -> the resource's name, a pointer to the key
// of the manager's resource table (stable while the resource is in it). The
// manager's invariant: a lease is in the index under exactly its current
// (expiry, token) for as long as it is held, and leaves it before its
// resource can leave the table.
//
// Thread safety: none; the lock manager's mu_ guards it.
#ifndef FENCEGATE_LOCKSERVICE_EXPIRY_INDEX_H_
#define FENCEGATE_LOCKSERVICE_EXPIRY_INDEX_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "lockservice/compact_time.h"

namespace fencegate::lockservice {

class ExpiryIndex {
 public:
  void Add(CompactTime expiry, uint64_t token, const std::string* resource) {
    entries_.emplace(Key(expiry, token), resource);
  }
  // No-op when absent.
  void Remove(CompactTime expiry, uint64_t token) { entries_.erase(Key(expiry, token)); }
  void Clear() { entries_.clear(); }

  bool empty() const { return entries_.empty(); }
  // The earliest expiry; InfiniteFuture() when empty.
  absl::Time Earliest() const {
    return entries_.empty() ? absl::InfiniteFuture() : entries_.begin()->first.first.get();
  }
  struct Entry {
    CompactTime expiry;
    uint64_t token = 0;
    const std::string* resource = nullptr;  // null: no entry
  };
  // The entry with the earliest expiry, if that is at or before `now` (it
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

#endif  // FENCEGATE_LOCKSERVICE_EXPIRY_INDEX_H_
