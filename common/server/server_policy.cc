#include "common/server/server_policy.h"

#include <utility>

namespace fencegate {

absl::StatusOr<std::unique_ptr<authz::Authorizer>> LoadServerPolicy(
    const ServingOptions& serving, ServerObservability& observability) {
  if (serving.policy_path.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<authz::Authorizer>> authorizer =
      authz::Authorizer::Load(serving.policy_path, observability.registry());
  if (!authorizer.ok()) return authorizer.status();
  observability.SetAuthorizer(authorizer->get());
  return authorizer;
}

absl::Status ReloadServerPolicy(authz::Authorizer* authorizer) {
  if (authorizer == nullptr) {
    return absl::FailedPreconditionError(
        "no policy (no --policy); restart with one to turn authorization on");
  }
  return authorizer->Reload();
}

std::string DescribeServerPolicy(const authz::Authorizer* authorizer) {
  return authorizer == nullptr ? "off" : authorizer->Describe();
}

}  // namespace fencegate
