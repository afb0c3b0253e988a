#include "gateway/gateway_call_authz.h"

namespace fencegate::gateway {

namespace v1 = ::fencegate::v1;
using authz::Permission;

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::WriteRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kWrite, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::MultiWriteRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kWrite, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ReadRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kRead, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::FenceRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kFence, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ListRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kRead, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::DescribeResourceRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kDescribe, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::GatewayCall& call) {
  switch (call.request_case()) {
    case v1::GatewayCall::kWrite:
      return AuthorizeCall(authorizer, subject, call.write());
    case v1::GatewayCall::kMultiWrite:
      return AuthorizeCall(authorizer, subject, call.multi_write());
    case v1::GatewayCall::kRead:
      return AuthorizeCall(authorizer, subject, call.read());
    case v1::GatewayCall::kFence:
      return AuthorizeCall(authorizer, subject, call.fence());
    case v1::GatewayCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::gateway
