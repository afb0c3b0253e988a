#include "lockservice/core/remembered_ids.h"

#include <cstdint>
#include <cstring>

namespace fencegate::lockservice {
namespace {

uint32_t ReadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void WriteU32(char* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

}  // namespace

template <typename Visit>
bool RememberedIds::ForEach(Visit visit) const {
  if (block_ == nullptr) return false;
  const char* p = block_.get();
  const char* const end = p + sizeof(uint32_t) + ReadU32(p);
  p += sizeof(uint32_t);
  while (p < end) {
    const uint32_t length = ReadU32(p);
    p += sizeof(uint32_t);
    if (visit(absl::string_view(p, length))) return true;
    p += length;
  }
  return false;
}

std::vector<absl::string_view> RememberedIds::Views() const {
  std::vector<absl::string_view> ids;
  ForEach([&ids](absl::string_view id) {
    ids.push_back(id);
    return false;
  });
  return ids;
}

void RememberedIds::Rebuild(absl::Span<const absl::string_view> ids) {
  size_t bytes = 0;
  for (absl::string_view id : ids) bytes += sizeof(uint32_t) + id.size();
  if (bytes == 0) {
    block_.reset();
    return;
  }
  auto block = std::make_unique<char[]>(sizeof(uint32_t) + bytes);
  char* p = block.get();
  WriteU32(p, static_cast<uint32_t>(bytes));
  p += sizeof(uint32_t);
  for (absl::string_view id : ids) {
    WriteU32(p, static_cast<uint32_t>(id.size()));
    p += sizeof(uint32_t);
    std::memcpy(p, id.data(), id.size());
    p += id.size();
  }
  block_ = std::move(block);  // after the copy: `ids` may point into the old block
}

bool RememberedIds::Contains(absl::string_view id) const {
  return ForEach([id](absl::string_view remembered) { return remembered == id; });
}

void RememberedIds::Remember(absl::string_view id, size_t limit) {
  if (id.empty()) return;
  if (block_ == nullptr && limit > 0) {  // a grant's first id: no vector
    Rebuild({id});
    return;
  }
  std::vector<absl::string_view> ids = Views();
  ids.push_back(id);
  if (ids.size() > limit) ids.erase(ids.begin(), ids.end() - limit);
  Rebuild(ids);
}

std::vector<std::string> RememberedIds::ToVector() const {
  std::vector<std::string> ids;
  for (absl::string_view id : Views()) ids.emplace_back(id);
  return ids;
}

void RememberedIds::Assign(const std::vector<std::string>& ids, size_t limit) {
  std::vector<absl::string_view> views;
  for (const std::string& id : ids) {
    if (!id.empty()) views.push_back(id);
  }
  if (views.size() > limit) views.erase(views.begin(), views.end() - limit);
  Rebuild(views);
}

}  // namespace fencegate::lockservice
