// A server's policy (--policy, common/authz/authorizer.h): loaded at start
// with its metrics in the server's registry and set for ServerInfo's admin
// check, reloaded on SIGHUP, described in logs. Both servers hold theirs
// as a std::unique_ptr<authz::Authorizer> (null: no --policy) and hand the
// pointer to their services.
//
// Thread safety: LoadServerPolicy() from the thread that builds the
// server; the others from any thread.
#ifndef FENCEGATE_COMMON_SERVER_SERVER_POLICY_H_
#define FENCEGATE_COMMON_SERVER_SERVER_POLICY_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/authz/authorizer.h"
#include "common/server/server_observability.h"
#include "common/server/server_setup.h"

namespace fencegate {

// Null when `serving` has no policy; the file's error (naming the file, the
// line and what is wrong) when it does not load. `observability` must
// outlive the result.
absl::StatusOr<std::unique_ptr<authz::Authorizer>> LoadServerPolicy(
    const ServingOptions& serving, ServerObservability& observability);

// authorizer->Reload(), or FAILED_PRECONDITION when null (no --policy).
absl::Status ReloadServerPolicy(authz::Authorizer* authorizer);

// "<path> (<n> rules)", or "off".
std::string DescribeServerPolicy(const authz::Authorizer* authorizer);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_SERVER_POLICY_H_
