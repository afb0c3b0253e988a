#include "tests/unit/fence_model.h"

#include "absl/strings/str_cat.h"
#include "gateway/request_validation.h"

namespace fencegate::gateway {

std::string WrittenText(uint64_t version, uint64_t fence) {
  return absl::StrCat("written at version ", version, ", fence ", fence);
}
std::string ReadText(bool found, absl::string_view value, uint64_t version,
                     uint64_t fence) {
  return found ? absl::StrCat("read '", value, "' version ", version, ", fence ", fence)
               : absl::StrCat("read absent (version ", version, "), fence ", fence);
}
std::string FencedText(uint64_t fence) { return absl::StrCat("fenced at ", fence); }
std::string StaleText(uint64_t fence) {
  return absl::StrCat("ABORTED STALE_TOKEN, fence ", fence);
}
std::string MismatchText(uint64_t fence, uint64_t version) {
  return absl::StrCat("ABORTED VERSION_MISMATCH, fence ", fence, ", key at version ",
                      version);
}
std::string InvalidText(absl::string_view field) {
  return absl::StrCat("INVALID_ARGUMENT ", field);
}

namespace {

bool BadToken(uint64_t token) { return token == 0 || token > kMaxToken; }

}  // namespace

FenceModel::Answer FenceModel::Write(const std::string& resource, uint64_t token,
                                     const std::vector<M>& mutations, bool multi) {
  if (BadToken(token)) return {InvalidText("token"), false};
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (!mutations[i].key.empty()) continue;
    return {InvalidText(multi ? absl::StrCat("mutations[", i, "].key") : "mutation.key"),
            false};
  }
  Resource& r = state_[resource];
  if (token < r.fence) return {StaleText(r.fence)};
  for (const M& m : mutations) {
    if (!m.expected) continue;
    auto it = r.objects.find(m.key);
    const uint64_t version = it == r.objects.end() ? 0 : it->second.version;
    if (version != *m.expected) return {MismatchText(r.fence, version)};
  }
  ++r.revision;
  r.fence = token;
  for (const M& m : mutations) {
    if (m.kind == Mutation::Kind::kPut) {
      r.objects[m.key] = Object{m.value, r.revision};
    } else {
      r.objects.erase(m.key);
    }
  }
  return {WrittenText(r.revision, token)};
}

FenceModel::Answer FenceModel::FencedRead(const std::string& resource,
                                          const std::string& key, uint64_t token) {
  if (key.empty()) return {InvalidText("key"), false};
  if (token == 0) {
    // A plain read: committed state, at once, whatever the batch holds.
    const Resource& r = Get(resource);
    auto it = r.objects.find(key);
    if (it == r.objects.end()) return {ReadText(false, "", 0, r.fence), false};
    return {ReadText(true, it->second.value, it->second.version, r.fence), false};
  }
  if (BadToken(token)) return {InvalidText("token"), false};
  Resource& r = state_[resource];
  if (token < r.fence) return {StaleText(r.fence)};
  r.fence = token;
  auto it = r.objects.find(key);
  if (it == r.objects.end()) return {ReadText(false, "", 0, token)};
  return {ReadText(true, it->second.value, it->second.version, token)};
}

FenceModel::Answer FenceModel::Fence(const std::string& resource, uint64_t token) {
  if (BadToken(token)) return {InvalidText("token"), false};
  Resource& r = state_[resource];
  if (token < r.fence) return {StaleText(r.fence)};
  r.fence = token;
  return {FencedText(token)};
}

const FenceModel::Resource& FenceModel::Find(const std::map<std::string, Resource>& in,
                                              const std::string& resource) {
  static const Resource* const kUnknown = new Resource();
  auto it = in.find(resource);
  return it == in.end() ? *kUnknown : it->second;
}

}  // namespace fencegate::gateway
