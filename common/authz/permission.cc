#include "common/authz/permission.h"

#include <string>

#include "absl/strings/str_join.h"

namespace fencegate::authz {
namespace {

// The table: one row per permission, in enum order.
constexpr PermissionInfo kPermissions[] = {
    {Permission::kAcquire, "acquire", true},   {Permission::kDescribe, "describe", true},
    {Permission::kRead, "read", true},         {Permission::kWrite, "write", true},
    {Permission::kFence, "fence", true},       {Permission::kAdmin, "admin", false},
    {Permission::kCampaign, "campaign", true},
};
static_assert(sizeof(kPermissions) / sizeof(kPermissions[0]) == kPermissionCount,
              "one row per permission");

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < kPermissionCount; ++i) {
    if (static_cast<size_t>(kPermissions[i].permission) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kPermissions must list the permissions in enum order");

}  // namespace

absl::Span<const PermissionInfo> AllPermissions() { return kPermissions; }

const PermissionInfo& InfoOf(Permission permission) {
  return kPermissions[static_cast<size_t>(permission)];
}

std::optional<Permission> PermissionNamed(absl::string_view name) {
  for (const PermissionInfo& info : kPermissions) {
    if (name == info.name) return info.permission;
  }
  return std::nullopt;
}

const char* PermissionNames() {
  static const std::string* const names = new std::string(absl::StrJoin(
      kPermissions, ", ",
      [](std::string* out, const PermissionInfo& info) { out->append(info.name); }));
  return names->c_str();
}

}  // namespace fencegate::authz
