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

// A term's lease renews and releases like any lease: a candidate needs no
// `acquire` for it.
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::RenewRequest& request) {
  return authz::AuthorizeEither(authorizer, subject, Permission::kAcquire,
                                Permission::kCampaign, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ReleaseRequest& request) {
  return authz::AuthorizeEither(authorizer, subject, Permission::kAcquire,
                                Permission::kCampaign, request.resource());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::CampaignRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kCampaign, request.election());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ProclaimRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kCampaign, request.election());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ResignRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kCampaign, request.election());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::LeaderRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kDescribe, request.election());
}

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const v1::ObserveRequest& request) {
  return authz::Authorize(authorizer, subject, Permission::kDescribe, request.election());
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
    case v1::LockCall::kCampaign:
      return AuthorizeCall(authorizer, subject, call.campaign());
    case v1::LockCall::kProclaim:
      return AuthorizeCall(authorizer, subject, call.proclaim());
    case v1::LockCall::kLeader:
      return AuthorizeCall(authorizer, subject, call.leader());
    case v1::LockCall::kResign:
      return AuthorizeCall(authorizer, subject, call.resign());
    case v1::LockCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
