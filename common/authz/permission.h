// Permission: what a policy rule grants (policy.h), one per kind of call.
// Every permission is one row of one table (permission.cc): its name in
// policy files, metrics and refusals, and whether it concerns a resource.
// A new permission is one enum value and one row; the parser, the metrics
// and the docs' list follow.
//
// Which RPC needs which permission: docs/security.md, "Authorization".
//
// Thread safety: constants and pure functions.
#ifndef FENCEGATE_COMMON_AUTHZ_PERMISSION_H_
#define FENCEGATE_COMMON_AUTHZ_PERMISSION_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace fencegate::authz {

enum class Permission {
  kAcquire,   // lock service: Acquire (one or several), Renew, Release
  kDescribe,  // lock service: Describe, WatchFences; gateway: Describe
  kRead,      // gateway: Read, List
  kWrite,     // gateway: Write, MultiWrite
  kFence,     // gateway: Fence
  kAdmin,     // both: ServerInfo's GetServerInfo and GetMetrics
  // lock service: Campaign, Proclaim, Resign; and Renew and Release of the
  // term's lease (acquire or campaign lets them through)
  kCampaign,
};

struct PermissionInfo {
  Permission permission;
  const char* name;  // in policy files, metric labels and refusals
  // False: the calls it covers name no resource (admin), so a rule must
  // grant it on every resource ("*").
  bool per_resource;
};

// Every permission, in enum order.
absl::Span<const PermissionInfo> AllPermissions();
inline constexpr size_t kPermissionCount = 7;

const PermissionInfo& InfoOf(Permission permission);
inline const char* NameOf(Permission permission) { return InfoOf(permission).name; }
// The permission named `name` (exactly, lower case), or nullopt.
std::optional<Permission> PermissionNamed(absl::string_view name);
// "acquire, describe, ...", for error messages.
const char* PermissionNames();

}  // namespace fencegate::authz

#endif  // FENCEGATE_COMMON_AUTHZ_PERMISSION_H_
