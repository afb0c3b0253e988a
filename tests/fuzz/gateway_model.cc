#include "tests/fuzz/gateway_model.h"

#include <algorithm>

#include "common/errors.h"
#include "tests/fuzz/fuzz_support.h"

namespace fencegate::fuzz {

using gateway::Mutation;

bool GatewayModel::CheckFence(const char* op, const std::string& resource, uint64_t token,
                              const absl::Status& status) {
  const uint64_t fence = resources_[resource].fence;
  const bool stale = token < fence;
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  const bool refused_stale = status.code() == absl::StatusCode::kAborted && info &&
                             info->reason == ErrorReason::kStaleToken;
  FUZZ_CHECK(stale == refused_stale, op, " of '", resource, "' with token ", token,
             " against fence ", fence, ": ", status.ToString());
  if (refused_stale) {
    FUZZ_CHECK(info->current_token == fence, op, " names fence ", info->current_token,
               ", it is ", fence);
  }
  return !stale;
}

void GatewayModel::OnWrite(const gateway::WriteArgs& args,
                           const absl::StatusOr<gateway::WriteResult>& result) {
  const absl::StatusCode code = result.status().code();
  if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kPermissionDenied) {
    return;  // nothing changed: the harness reads the resource back
  }
  const std::string resource(args.resource);
  if (!CheckFence("write", resource, args.token, result.status())) return;
  Resource& r = resources_[resource];
  // The first expected_version that does not match, if any.
  size_t mismatch = args.mutations.size();
  uint64_t current = 0;
  for (size_t i = 0; i < args.mutations.size() && mismatch == args.mutations.size(); ++i) {
    const Mutation& m = args.mutations[i];
    auto it = r.keys.find(std::string(m.key));
    current = it == r.keys.end() ? 0 : it->second.version;
    if (m.expected_version && *m.expected_version != current) mismatch = i;
  }
  std::optional<ErrorInfo> info = GetErrorInfo(result.status());
  if (mismatch != args.mutations.size()) {
    FUZZ_CHECK(code == absl::StatusCode::kAborted && info &&
                   info->reason == ErrorReason::kVersionMismatch &&
                   info->current_version == current && info->current_token == r.fence,
               "write of '", resource, "': mutation ", mismatch, " expects version ",
               *args.mutations[mismatch].expected_version, ", the key is at ", current,
               "; got ", result.status().ToString());
    return;
  }
  FUZZ_CHECK(result.ok(), "write of '", resource, "' with token ", args.token,
             " refused: ", result.status().ToString());
  FUZZ_CHECK(result->version == r.revision + 1 && result->max_token == args.token,
             "write of '", resource, "' answered version ", result->version, " fence ",
             result->max_token, ", expected ", r.revision + 1, " and ", args.token);
  r.fence = args.token;
  ++r.revision;
  for (const Mutation& m : args.mutations) {
    if (m.kind == Mutation::Kind::kPut) {
      r.keys[std::string(m.key)] = Object{std::string(m.value), r.revision};
    } else {
      r.keys.erase(std::string(m.key));
    }
  }
}

void GatewayModel::OnRead(const gateway::ReadArgs& args,
                          const absl::StatusOr<gateway::ReadResult>& result) {
  const absl::StatusCode code = result.status().code();
  if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kPermissionDenied) {
    return;
  }
  const std::string resource(args.resource);
  if (args.token != 0 && !CheckFence("fenced read", resource, args.token, result.status())) {
    return;
  }
  FUZZ_CHECK(result.ok(), "read of '", resource, "': ", result.status().ToString());
  Resource& r = resources_[resource];
  if (args.token != 0) r.fence = args.token;
  auto it = r.keys.find(std::string(args.key));
  const bool found = it != r.keys.end();
  FUZZ_CHECK(result->found == found && result->max_token == r.fence &&
                 result->version == (found ? it->second.version : 0) &&
                 result->value == (found ? it->second.value : ""),
             "read of '", resource, "' key '", args.key, "': found ", result->found,
             " version ", result->version, " fence ", result->max_token, "; expected ",
             found, " ", found ? it->second.version : 0, " ", r.fence);
}

void GatewayModel::OnFence(const gateway::FenceArgs& args,
                           const absl::StatusOr<gateway::FenceResult>& result) {
  const absl::StatusCode code = result.status().code();
  if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kPermissionDenied) {
    return;
  }
  const std::string resource(args.resource);
  if (!CheckFence("fence", resource, args.token, result.status())) return;
  FUZZ_CHECK(result.ok() && result->max_token == args.token, "fence of '", resource,
             "' to ", args.token, ": ", result.status().ToString());
  resources_[resource].fence = args.token;
}

void GatewayModel::OnRaiseFence(const std::string& resource, uint64_t position,
                                const absl::StatusOr<gateway::FenceResult>& result) {
  if (result.status().code() == absl::StatusCode::kInvalidArgument) return;
  Resource& r = resources_[resource];
  const uint64_t fence = std::max(r.fence, position);
  FUZZ_CHECK(result.ok() && result->max_token == fence, "raising the fence of '", resource,
             "' from ", r.fence, " to ", position, ": ", result.status().ToString());
  r.fence = fence;
}

void GatewayModel::OnList(const gateway::ListArgs& args,
                          const absl::StatusOr<gateway::ListResult>& result) {
  if (result.status().code() == absl::StatusCode::kInvalidArgument) return;
  const std::string resource(args.resource);
  FUZZ_CHECK(result.ok(), "list of '", resource, "': ", result.status().ToString());
  const Resource& r = resources_[resource];
  const size_t limit = args.page_size == 0 ? limits_.default_page_size : args.page_size;
  auto it = r.keys.upper_bound(std::string(args.page_token));
  size_t i = 0;
  for (; it != r.keys.end() && i < limit; ++it, ++i) {
    FUZZ_CHECK(i < result->keys.size(), "list of '", resource, "' ends early at ", i);
    const gateway::KeyInfo& got = result->keys[i];
    FUZZ_CHECK(got.key == it->first && got.version == it->second.version &&
                   got.size_bytes == it->second.value.size(),
               "list of '", resource, "' entry ", i, " is '", got.key, "' v", got.version,
               ", expected '", it->first, "' v", it->second.version);
  }
  FUZZ_CHECK(result->keys.size() == i, "list of '", resource, "' has ",
             result->keys.size(), " keys, expected ", i);
  const std::string next = it != r.keys.end() && i > 0 ? result->keys.back().key : "";
  FUZZ_CHECK(result->next_page_token == next, "list of '", resource, "': page token '",
             result->next_page_token, "', expected '", next, "'");
}

void GatewayModel::OnDescribe(const std::string& resource,
                              const absl::StatusOr<gateway::ResourceStats>& result) {
  if (result.status().code() == absl::StatusCode::kInvalidArgument) return;
  FUZZ_CHECK(result.ok(), "describe of '", resource, "': ", result.status().ToString());
  const Resource& r = resources_[resource];
  uint64_t bytes = 0;
  for (const auto& [key, object] : r.keys) bytes += object.value.size();
  FUZZ_CHECK(result->max_token == r.fence && result->key_count == r.keys.size() &&
                 result->total_bytes == bytes,
             "describe of '", resource, "': fence ", result->max_token, ", ",
             result->key_count, " keys, ", result->total_bytes, " bytes; expected ",
             r.fence, ", ", r.keys.size(), ", ", bytes);
}

std::vector<std::string> GatewayModel::Resources() const {
  std::vector<std::string> names;
  for (const auto& [name, r] : resources_) names.push_back(name);
  return names;
}

}  // namespace fencegate::fuzz
