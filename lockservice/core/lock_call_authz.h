// Which permission (common/authz/permission.h) each LockService call needs,
// on which resources, and its check: the one place that maps the lock
// service's calls to the policy (--policy, docs/security.md,
// "Authorization"). The unary calls (lock_service.h) and the Session
// stream's calls (lock_session.h) both ask it, before anything else is
// done with the call.
//
//   Acquire                    acquire   the resource (Acquire of several:
//                                        every one of them)
//   Renew, Release             acquire or campaign, the resource
//   Campaign, Proclaim, Resign campaign  the election
//   Describe, WatchFences      describe  the resource (WatchFences: every
//                                        resource, "")
//   Leader, Observe            describe  the election
//
// Returns OK or the Authorizer's PERMISSION_DENIED; OK with a null
// authorizer (no policy). Thread safety: pure functions of their arguments.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_AUTHZ_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_AUTHZ_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/authz/authorizer.h"
#include "fencegate/v1/lock.pb.h"

namespace fencegate::lockservice {

absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::AcquireRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::RenewRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ReleaseRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::DescribeRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::WatchFencesRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::CampaignRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ProclaimRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ResignRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::LeaderRequest& request);
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::ObserveRequest& request);
// A Session stream's call: as its unary call.
absl::Status AuthorizeCall(const authz::Authorizer* authorizer, absl::string_view subject,
                           const fencegate::v1::LockCall& call);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_CALL_AUTHZ_H_
