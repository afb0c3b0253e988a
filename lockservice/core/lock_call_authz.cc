#include "lockservice/core/lock_call_authz.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;
using authz::Permission;

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::AcquireRequest& request) {
  if (request.resources_size() > 0) {
    return authz::AuthorizeEach(authorizer, subject, Permission::kAcquire,
                                request.resources());
  }
  return authz::Authorize(authorizer, subject, Permission::kAcquire, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::RenewRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kAcquire, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ReleaseRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kAcquire, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::DescribeRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kDescribe, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::WatchFencesRequest&) {
  return authz::Authorize(authorizer, subject, Permission::kDescribe, "");
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::LockCall& call) {
  switch (call.request_case()) {
    case v1::LockCall::kAcquire:
      return AuthorizeCall(authorizer, subject, call.acquire());
    case v1::LockCall::kRenew:
      return AuthorizeCall(authorizer, subject, call.renew());
    case v1::LockCall::kRelease:
      return AuthorizeCall(authorizer, subject, call.release());
    case v1::LockCall::kDescribe:
      return AuthorizeCall(authorizer, subject, call.describe());
    case v1::LockCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
