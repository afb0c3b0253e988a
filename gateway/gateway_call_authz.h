// Which permission (common/authz/permission.h) each Gateway call needs, and
// its check: the one place that maps the gateway's calls to the policy
// (--policy, docs/security.md, "Authorization"). The unary calls
// (gateway_service.h) and the Session stream's calls (session.h) both ask
// it, before anything else is done with the call.
//
//   Write, MultiWrite   write     the resource
//   Read, List          read      the resource (a fenced Read too)
//   Fence               fence     the resource
//   Describe            describe  the resource
//
// Returns OK or the Authorizer's PERMISSION_DENIED; OK with a null
// authorizer (no policy). Thread safety: pure functions of their arguments.
#ifndef FENCEGATE_GATEWAY_GATEWAY_CALL_AUTHZ_H_
#define FENCEGATE_GATEWAY_GATEWAY_CALL_AUTHZ_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/authz/authorizer.h"
#include "fencegate/v1/gateway.pb.h"

namespace fencegate::gateway {

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::WriteRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::MultiWriteRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ReadRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::FenceRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ListRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::DescribeResourceRequest& request);
// A Session stream's call: as its unary call.
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::GatewayCall& call);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_CALL_AUTHZ_H_
