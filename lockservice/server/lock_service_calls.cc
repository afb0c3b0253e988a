#include "lockservice/server/lock_service_calls.h"

#include "absl/strings/str_cat.h"
#include "common/core/validation.h"
#include "common/grpc/grpc_status.h"
#include "common/server/tls.h"
#include "lockservice/core/lock_call_authz.h"
#include "lockservice/core/lock_requests.h"
#include "lockservice/core/lock_session.h"
#include "lockservice/server/fence_watch.h"
#include "lockservice/server/forwarding_lock_service.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

absl::StatusOr<Caller> LockServiceCalls::CallerOf(
    grpc::ServerContextBase& context) const {
  absl::StatusOr<std::string> subject = CallerSubject(context);
  if (!subject.ok()) return subject.status();
  return Caller{identity_.mutual_tls, *std::move(subject)};
}

absl::StatusOr<std::string> LockServiceCalls::CallerSubject(
    grpc::ServerContextBase& context) const {
  if (!identity_.mutual_tls) return std::string();
  std::string subject = PeerSubject(context);
  const auto& metadata = context.client_metadata();
  if (identity_.peer_subject.empty() || subject != identity_.peer_subject ||
      metadata.count(kForwardedMetadata) == 0) {
    return subject;  // a client's own connection
  }
  auto forwarded = metadata.find(kForwardedSubjectMetadata);
  if (forwarded == metadata.end() || forwarded->second.empty()) {
    return absl::PermissionDeniedError(
        "a call forwarded by another lock-service instance did not say whose it is; "
        "that instance must forward the caller's certificate subject");
  }
  return std::string(forwarded->second.data(), forwarded->second.size());
}

template <typename Request>
absl::Status LockServiceCalls::Authorized(grpc::ServerContextBase& context,
                                          const Request& request) const {
  if (absl::Status known = RejectUnknownFields(request); !known.ok()) return known;
  if (identity_.authorizer == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> subject = CallerSubject(context);
  if (!subject.ok()) return subject.status();
  return AuthorizeCall(identity_.authorizer, *subject, request);
}

template <typename Request>
absl::StatusOr<Caller> LockServiceCalls::AllowedCaller(grpc::ServerContextBase& context,
                                                       const Request& request) const {
  if (absl::Status known = RejectUnknownFields(request); !known.ok()) return known;
  absl::StatusOr<Caller> caller = CallerOf(context);
  if (!caller.ok()) return caller;
  absl::Status allowed = AuthorizeCall(identity_.authorizer, caller->subject, request);
  if (!allowed.ok()) return allowed;
  return caller;
}

// The election calls' (lock_service_calls_elections.cc).
template absl::Status LockServiceCalls::Authorized(grpc::ServerContextBase&,
                                                   const v1::LeaderRequest&) const;
template absl::Status LockServiceCalls::Authorized(grpc::ServerContextBase&,
                                                   const v1::ObserveRequest&) const;
template absl::StatusOr<Caller> LockServiceCalls::AllowedCaller(
    grpc::ServerContextBase&, const v1::CampaignRequest&) const;
template absl::StatusOr<Caller> LockServiceCalls::AllowedCaller(
    grpc::ServerContextBase&, const v1::ProclaimRequest&) const;
template absl::StatusOr<Caller> LockServiceCalls::AllowedCaller(
    grpc::ServerContextBase&, const v1::ResignRequest&) const;

void LockServiceCalls::Acquire(grpc::ServerContextBase& context,
                               const v1::AcquireRequest& request,
                               v1::AcquireResponse* response, UnaryReply* reply) {
  absl::StatusOr<Caller> caller = AllowedCaller(context, request);
  if (request.resources_size() > 0 && caller.ok()) {
    return AcquireMany(request, *caller, response, reply);
  }
  StartAcquire(caller.ok() ? AcquireArgsFor(request, signer_, *caller) : caller.status(),
               response, reply);
}

void LockServiceCalls::StartAcquire(absl::StatusOr<AcquireArgs> args,
                                    v1::AcquireResponse* response, UnaryReply* reply) {
  if (!args.ok()) return reply->Finish(args.status());
  const LockManager::CallId id = manager_->NewCallId();
  const TokenSigner* signer = signer_;
  std::string resource = args->resource;
  manager_->Acquire(id, *std::move(args),
                    [reply, response, signer, resource = std::move(resource)](
                        absl::StatusOr<AcquireResult> result) {
                      absl::Status status = result.status();
                      if (status.ok()) {
                        status = FillAcquireResponse(signer, resource, *result, response);
                      }
                      reply->Finish(status);
                    });
  // A client that went away before the call was parked cancels it now.
  reply->OnCancelled([manager = manager_, id] { manager->CancelAcquire(id); });
}

void LockServiceCalls::AcquireMany(const v1::AcquireRequest& request,
                                   const Caller& caller, v1::AcquireResponse* response,
                                   UnaryReply* reply) {
  absl::StatusOr<MultiAcquireArgs> args = MultiAcquireArgsFor(request, signer_, caller);
  if (!args.ok()) return reply->Finish(args.status());
  const LockManager::CallId id = manager_->NewCallId();
  const TokenSigner* signer = signer_;
  std::vector<std::string> resources = args->resources;
  manager_->AcquireMany(
      id, *std::move(args),
      [reply, response, signer,
       resources = std::move(resources)](absl::StatusOr<MultiAcquireResult> result) {
        absl::Status status = result.status();
        if (status.ok()) {
          status = FillMultiAcquireResponse(signer, resources, *result, response);
        }
        reply->Finish(status);
      });
  reply->OnCancelled([manager = manager_, id] { manager->CancelAcquire(id); });
}

void LockServiceCalls::Renew(grpc::ServerContextBase& context,
                             const v1::RenewRequest& request, v1::RenewResponse* response,
                             UnaryReply* reply) {
  absl::StatusOr<RenewArgs> args = AllowedArgs<RenewArgsFor>(context, request);
  if (!args.ok()) return reply->Finish(args.status());
  std::string resource = args->resource;
  const uint64_t token = args->token;
  const int mode = request.mode();
  manager_->Renew(*std::move(args),
                  Answer<RenewResult>(reply, [response, signer = signer_, token, mode,
                                              resource = std::move(resource)](
                                                 const RenewResult& result) {
                    FillRenewResponse(signer, resource, token, mode, result, response);
                  }));
}

void LockServiceCalls::Release(grpc::ServerContextBase& context,
                               const v1::ReleaseRequest& request,
                               v1::ReleaseResponse* response, UnaryReply* reply) {
  absl::StatusOr<ReleaseArgs> args = AllowedArgs<ReleaseArgsFor>(context, request);
  if (!args.ok()) return reply->Finish(args.status());
  manager_->Release(*std::move(args),
                    Answer<ReleaseResult>(reply, [response](const ReleaseResult& result) {
                      FillReleaseResponse(result, response);
                    }));
}

void LockServiceCalls::Describe(grpc::ServerContextBase& context,
                                const v1::DescribeRequest& request,
                                v1::DescribeResponse* response, UnaryReply* reply) {
  if (absl::Status allowed = Authorized(context, request); !allowed.ok()) {
    return reply->Finish(allowed);
  }
  manager_->Describe(request.resource(),
                     Answer<ResourceInfo>(reply, [response](const ResourceInfo& info) {
                       FillDescribeResponse(info, response);
                     }));
}

ResponseStreamEvents* LockServiceCalls::WatchFences(
    grpc::ServerContextBase& context, const v1::WatchFencesRequest& request,
    ResponseStream<v1::WatchFencesResponse>* stream) {
  if (absl::Status allowed = Authorized(context, request); !allowed.ok()) {
    stream->Finish(ToGrpcStatus(allowed));
    return nullptr;
  }
  return StartFenceWatch(request, store_, feed_, fence_watchers_, stream);
}

StreamSession* LockServiceCalls::Session(grpc::ServerContextBase& context,
                                         StreamTransport* transport) {
  // The manager ends its sessions when it stops.
  return LockSession::Start(manager_, signer_, CallerOf(context), session_limits_,
                            transport, identity_.authorizer);
}

}  // namespace fencegate::lockservice
