// RememberedIds: the last few request ids of a held lease (the calls whose
// retries must be answered as already applied), in one allocation.
//
// A held lease kept them in a std::vector<std::string>: 24 bytes in the
// lease, and with the one 32-character id the client library sends, two
// heap blocks (the vector's and the string's: 96 bytes from malloc). Here
// they are one pointer in the lease (null while empty) to one block: a
// 4-byte count of the bytes that follow, then each id as a 4-byte length
// and its bytes, oldest first (one 32-character id: a 48-byte block).
//
// Thread safety: a plain value; the lock manager's mutex guards it.
#ifndef FENCEGATE_LOCKSERVICE_CORE_REMEMBERED_IDS_H_
#define FENCEGATE_LOCKSERVICE_CORE_REMEMBERED_IDS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fencegate::lockservice {

class RememberedIds {
 public:
  RememberedIds() = default;
  RememberedIds(RememberedIds&&) = default;
  RememberedIds& operator=(RememberedIds&&) = default;

  bool empty() const { return block_ == nullptr; }
  bool Contains(absl::string_view id) const;
  // Adds `id` as the newest and forgets the oldest beyond `limit` (0: keeps
  // nothing). An empty id is not remembered.
  void Remember(absl::string_view id, size_t limit);
  // Oldest first: what the store persists, and what it gives back.
  std::vector<std::string> ToVector() const;
  void Assign(const std::vector<std::string>& ids, size_t limit);

 private:
  // Calls `visit(id)` for each id, oldest first, until it returns true;
  // returns whether one did.
  template <typename Visit>
  bool ForEach(Visit visit) const;
  std::vector<absl::string_view> Views() const;  // into block_
  void Rebuild(absl::Span<const absl::string_view> ids);

  std::unique_ptr<char[]> block_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_REMEMBERED_IDS_H_
