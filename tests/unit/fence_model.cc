#include "tests/unit/fence_model.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "gateway/request_validation.h"

namespace fencegate::gateway {
namespace {

// User bytes, quoted so that no two byte strings read alike.
std::string Quoted(absl::string_view bytes) {
  return absl::StrCat("'", absl::CEscape(bytes), "'");
}

bool BadToken(uint64_t token) { return token == 0 || token > kMaxToken; }

}  // namespace

std::string WrittenText(uint64_t version, uint64_t fence) {
  return absl::StrCat("written at version ", version, ", fence ", fence);
}
std::string ReadText(bool found, absl::string_view value, uint64_t version,
                     uint64_t fence) {
  if (found)
    return absl::StrCat("read ", Quoted(value), " version ", version, ", fence ", fence);
  // An absent key has no value: one would show.
  return absl::StrCat("read absent (version ", version, "), fence ", fence,
                      value.empty() ? "" : absl::StrCat(", value ", Quoted(value)));
}
std::string FencedText(uint64_t fence) { return absl::StrCat("fenced at ", fence); }
std::string ListText(const std::vector<KeyInfo>& keys,
                     absl::string_view next_page_token) {
  std::string out = absl::StrCat("listed ", keys.size(), " keys:");
  for (const KeyInfo& k : keys) {
    absl::StrAppend(&out, " ", Quoted(k.key), "@", k.version, "(", k.size_bytes, "B)");
  }
  absl::StrAppend(&out, "; next page ", Quoted(next_page_token));
  return out;
}
std::string DescribeText(const ResourceStats& stats) {
  return absl::StrCat("fence ", stats.max_token, ", ", stats.key_count, " keys, ",
                      stats.total_bytes, " bytes");
}
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

std::string ReplyText(const absl::Status& status) {
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  if (status.code() == absl::StatusCode::kAborted && info) {
    if (info->reason == ErrorReason::kStaleToken) return StaleText(info->current_token);
    if (info->reason == ErrorReason::kVersionMismatch) {
      return MismatchText(info->current_token, info->current_version);
    }
  }
  if (status.code() == absl::StatusCode::kInvalidArgument && info) {
    return InvalidText(info->field);
  }
  if (status.code() == absl::StatusCode::kUnavailable) return kUnavailableText;
  return status.ToString();
}
std::string ReplyText(const absl::StatusOr<WriteResult>& reply) {
  return reply.ok() ? WrittenText(reply->version, reply->max_token)
                    : ReplyText(reply.status());
}
std::string ReplyText(const absl::StatusOr<ReadResult>& reply) {
  return reply.ok()
             ? ReadText(reply->found, reply->value, reply->version, reply->max_token)
             : ReplyText(reply.status());
}
std::string ReplyText(const absl::StatusOr<FenceResult>& reply) {
  return reply.ok() ? FencedText(reply->max_token) : ReplyText(reply.status());
}
std::string ReplyText(const absl::StatusOr<ListResult>& reply) {
  return reply.ok() ? ListText(reply->keys, reply->next_page_token)
                    : ReplyText(reply.status());
}
std::string ReplyText(const absl::StatusOr<ResourceStats>& reply) {
  return reply.ok() ? DescribeText(*reply) : ReplyText(reply.status());
}

FenceModel::Answer FenceModel::Write(const std::string& resource, uint64_t token,
                                     const std::vector<M>& mutations, bool multi) {
  if (BadToken(token)) return {InvalidText("token"), false};
  for (size_t i = 0; i < mutations.size(); ++i) {
    const std::string field = multi ? absl::StrCat("mutations[", i, "]") : "mutation";
    if (mutations[i].kind == Mutation::Kind::kUnset) return {InvalidText(field), false};
    if (mutations[i].key.empty())
      return {InvalidText(absl::StrCat(field, ".key")), false};
  }
  if (token < Floor(resource)) return {StaleText(Floor(resource)), false};
  Decide(resource);
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
  if (token == 0) return Read(resource, key);
  if (BadToken(token)) return {InvalidText("token"), false};
  if (token < Floor(resource)) return {StaleText(Floor(resource)), false};
  Decide(resource);
  Resource& r = state_[resource];
  if (token < r.fence) return {StaleText(r.fence)};
  r.fence = token;
  auto it = r.objects.find(key);
  if (it == r.objects.end()) return {ReadText(false, "", 0, token)};
  return {ReadText(true, it->second.value, it->second.version, token)};
}

FenceModel::Answer FenceModel::Fence(const std::string& resource, uint64_t token) {
  if (BadToken(token)) return {InvalidText("token"), false};
  if (token < Floor(resource)) return {StaleText(Floor(resource)), false};
  Decide(resource);
  Resource& r = state_[resource];
  if (token < r.fence) return {StaleText(r.fence)};
  r.fence = token;
  return {FencedText(token)};
}

FenceModel::Answer FenceModel::RaiseFence(const std::string& resource,
                                          uint64_t position) {
  if (BadToken(position)) return {InvalidText("token"), false};
  if (position < Floor(resource)) return {FencedText(Floor(resource)), false};
  Decide(resource);
  Resource& r = state_[resource];
  r.fence = std::max(r.fence, position);
  return {FencedText(r.fence)};
}

FenceModel::Answer FenceModel::Read(const std::string& resource,
                                    const std::string& key) {
  if (key.empty()) return {InvalidText("key"), false};
  const Resource& r = Get(resource);
  if (fence_cache_ && r.fence > 0) {
    uint64_t& floor = floors_[resource];
    floor = std::max(floor, r.fence);
  }
  auto it = r.objects.find(key);
  if (it == r.objects.end()) return {ReadText(false, "", 0, r.fence), false};
  return {ReadText(true, it->second.value, it->second.version, r.fence), false};
}

FenceModel::Answer FenceModel::List(const std::string& resource, uint32_t page_size,
                                    const std::string& page_token) const {
  const Resource& r = Get(resource);
  const size_t limit = page_size == 0 ? limits_.default_page_size : page_size;
  std::vector<KeyInfo> keys;
  auto it = r.objects.upper_bound(page_token);
  for (; it != r.objects.end() && keys.size() < limit; ++it) {
    keys.push_back(KeyInfo{it->first, it->second.version, it->second.value.size()});
  }
  const std::string next = it != r.objects.end() && !keys.empty() ? keys.back().key : "";
  return {ListText(keys, next), false};
}

FenceModel::Answer FenceModel::Describe(const std::string& resource) const {
  const Resource& r = Get(resource);
  ResourceStats stats{r.fence, r.objects.size(), 0};
  for (const auto& [key, object] : r.objects) stats.total_bytes += object.value.size();
  return {DescribeText(stats), false};
}

void FenceModel::CommitStep() {
  committed_ = state_;
  if (fence_cache_) {
    // Each decided op taught the cache the fence it saw or made; fences
    // only grow within a step, so the largest is the committed one.
    for (const std::string& resource : deciding_) {
      uint64_t& floor = floors_[resource];
      floor = std::max(floor, Get(resource).fence);
    }
  }
  deciding_.clear();
}

void FenceModel::FailStep() {
  state_ = committed_;
  deciding_.clear();
}

uint64_t FenceModel::Floor(const std::string& resource) const {
  auto it = floors_.find(resource);
  return fence_cache_ && it != floors_.end() ? it->second : 0;
}

const FenceModel::Resource& FenceModel::Find(const std::map<std::string, Resource>& in,
                                              const std::string& resource) {
  static const Resource* const kUnknown = new Resource();
  auto it = in.find(resource);
  return it == in.end() ? *kUnknown : it->second;
}

}  // namespace fencegate::gateway
