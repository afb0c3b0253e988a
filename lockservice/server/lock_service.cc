#include "lockservice/server/lock_service.h"

#include "absl/strings/str_cat.h"
#include "common/core/validation.h"
#include "common/grpc/grpc_status.h"
#include "common/server/stream_reactor.h"
#include "common/server/tls.h"
#include "lockservice/core/lock_call_authz.h"
#include "lockservice/core/lock_requests.h"
#include "lockservice/core/lock_session.h"
#include "lockservice/server/fence_watch.h"
#include "lockservice/server/forwarding_lock_service.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;

// A parked Acquire must learn that its client went away, so the waiter leaves
// the queue; the default reactor cannot tell it.
class AcquireReactor final : public grpc::ServerUnaryReactor {
 public:
  AcquireReactor(std::shared_ptr<LockManager> manager, LockManager::CallId id)
      : manager_(std::move(manager)), id_(id) {}
  void OnCancel() override { manager_->CancelAcquire(id_); }
  void OnDone() override { delete this; }

 private:
  const std::shared_ptr<LockManager> manager_;
  const LockManager::CallId id_;
};

}  // namespace

grpc::ServerUnaryReactor* LockServiceImpl::Finished(grpc::ServerUnaryReactor* reactor,
                                                    const absl::Status& status) {
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

absl::StatusOr<Caller> LockServiceImpl::CallerOf(
    grpc::CallbackServerContext* context) const {
  absl::StatusOr<std::string> subject = CallerSubject(context);
  if (!subject.ok()) return subject.status();
  return Caller{identity_.mutual_tls, *std::move(subject)};
}

absl::StatusOr<std::string> LockServiceImpl::CallerSubject(
    grpc::CallbackServerContext* context) const {
  if (!identity_.mutual_tls) return std::string();
  std::string subject = PeerSubject(*context);
  const auto& metadata = context->client_metadata();
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
absl::Status LockServiceImpl::Authorized(grpc::CallbackServerContext* context,
                                         const Request& request) const {
  if (absl::Status known = RejectUnknownFields(request); !known.ok()) return known;
  if (identity_.authorizer == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> subject = CallerSubject(context);
  if (!subject.ok()) return subject.status();
  return AuthorizeCall(identity_.authorizer, *subject, request);
}

template <typename Request>
absl::StatusOr<Caller> LockServiceImpl::AllowedCaller(
    grpc::CallbackServerContext* context, const Request& request) const {
  if (absl::Status known = RejectUnknownFields(request); !known.ok()) return known;
  absl::StatusOr<Caller> caller = CallerOf(context);
  if (!caller.ok()) return caller;
  absl::Status allowed = AuthorizeCall(identity_.authorizer, caller->subject, request);
  if (!allowed.ok()) return allowed;
  return caller;
}

// The election calls' (lock_service_elections.cc).
template absl::Status LockServiceImpl::Authorized(grpc::CallbackServerContext*,
                                                  const v1::LeaderRequest&) const;
template absl::Status LockServiceImpl::Authorized(grpc::CallbackServerContext*,
                                                  const v1::ObserveRequest&) const;
template absl::StatusOr<Caller> LockServiceImpl::AllowedCaller(
    grpc::CallbackServerContext*, const v1::CampaignRequest&) const;
template absl::StatusOr<Caller> LockServiceImpl::AllowedCaller(
    grpc::CallbackServerContext*, const v1::ProclaimRequest&) const;
template absl::StatusOr<Caller> LockServiceImpl::AllowedCaller(
    grpc::CallbackServerContext*, const v1::ResignRequest&) const;

grpc::ServerUnaryReactor* LockServiceImpl::Acquire(grpc::CallbackServerContext* context,
                                                   const v1::AcquireRequest* request,
                                                   v1::AcquireResponse* response) {
  LockManager::CallId id = manager_->NewCallId();
  grpc::ServerUnaryReactor* reactor = NewAcquireReactor(id);
  absl::StatusOr<Caller> caller = AllowedCaller(context, *request);
  if (request->resources_size() > 0 && caller.ok()) {
    AcquireMany(context, id, reactor, *request, *caller, response);
    return reactor;
  }
  StartAcquire(context, id, reactor,
               caller.ok() ? AcquireArgsFor(*request, signer_, *caller) : caller.status(),
               response);
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::NewAcquireReactor(LockManager::CallId id) {
  return new AcquireReactor(manager_, id);
}

void LockServiceImpl::StartAcquire(grpc::CallbackServerContext* context,
                                   LockManager::CallId id,
                                   grpc::ServerUnaryReactor* reactor,
                                   absl::StatusOr<AcquireArgs> args,
                                   v1::AcquireResponse* response) {
  if (!args.ok()) {
    reactor->Finish(ToGrpcStatus(args.status()));
    return;
  }
  const TokenSigner* signer = signer_;
  std::string resource = args->resource;
  manager_->Acquire(id, *std::move(args),
                    [reactor, response, signer, resource = std::move(resource)](
                        absl::StatusOr<AcquireResult> result) {
                      absl::Status status = result.status();
                      if (status.ok()) {
                        status = FillAcquireResponse(signer, resource, *result, response);
                      }
                      reactor->Finish(ToGrpcStatus(status));
                    });
  // The client may have gone before the call was parked; OnCancel then found
  // nothing to cancel.
  if (context->IsCancelled()) manager_->CancelAcquire(id);
}

void LockServiceImpl::AcquireMany(grpc::CallbackServerContext* context,
                                  LockManager::CallId id,
                                  grpc::ServerUnaryReactor* reactor,
                                  const v1::AcquireRequest& request, const Caller& caller,
                                  v1::AcquireResponse* response) {
  absl::StatusOr<MultiAcquireArgs> args = MultiAcquireArgsFor(request, signer_, caller);
  if (!args.ok()) {
    reactor->Finish(ToGrpcStatus(args.status()));
    return;
  }
  const TokenSigner* signer = signer_;
  std::vector<std::string> resources = args->resources;
  manager_->AcquireMany(
      id, *std::move(args),
      [reactor, response, signer,
       resources = std::move(resources)](absl::StatusOr<MultiAcquireResult> result) {
        absl::Status status = result.status();
        if (status.ok()) {
          status = FillMultiAcquireResponse(signer, resources, *result, response);
        }
        reactor->Finish(ToGrpcStatus(status));
      });
  if (context->IsCancelled()) manager_->CancelAcquire(id);
}

grpc::ServerUnaryReactor* LockServiceImpl::Renew(grpc::CallbackServerContext* context,
                                                 const v1::RenewRequest* request,
                                                 v1::RenewResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<RenewArgs> args = AllowedArgs<RenewArgsFor>(context, *request);
  if (!args.ok()) return Finished(reactor, args.status());
  std::string resource = args->resource;
  const uint64_t token = args->token;
  const int mode = request->mode();
  manager_->Renew(*std::move(args),
                  Answer<RenewResult>(reactor, [response, signer = signer_, token, mode,
                                                resource = std::move(resource)](
                                                   const RenewResult& result) {
                    FillRenewResponse(signer, resource, token, mode, result, response);
                  }));
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Release(grpc::CallbackServerContext* context,
                                                   const v1::ReleaseRequest* request,
                                                   v1::ReleaseResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ReleaseArgs> args = AllowedArgs<ReleaseArgsFor>(context, *request);
  if (!args.ok()) return Finished(reactor, args.status());
  manager_->Release(
      *std::move(args),
      Answer<ReleaseResult>(reactor, [response](const ReleaseResult& result) {
        FillReleaseResponse(result, response);
      }));
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Describe(grpc::CallbackServerContext* context,
                                                    const v1::DescribeRequest* request,
                                                    v1::DescribeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status allowed = Authorized(context, *request); !allowed.ok()) {
    return Finished(reactor, allowed);
  }
  manager_->Describe(request->resource(),
                     Answer<ResourceInfo>(reactor, [response](const ResourceInfo& info) {
                       FillDescribeResponse(info, response);
                     }));
  return reactor;
}

grpc::ServerWriteReactor<v1::WatchFencesResponse>* LockServiceImpl::WatchFences(
    grpc::CallbackServerContext* context, const v1::WatchFencesRequest* request) {
  if (absl::Status allowed = Authorized(context, *request); !allowed.ok()) {
    return RefuseFenceWatch(allowed);
  }
  return StartFenceWatch(*request, store_, feed_, fence_watchers_);
}

RawStreamReactor* LockServiceImpl::Session(grpc::CallbackServerContext* context) {
  const absl::StatusOr<Caller> caller = CallerOf(context);
  return new StreamReactor(
      [&](StreamTransport* transport) {
        return LockSession::Start(manager_, signer_, caller, session_limits_, transport,
                                  identity_.authorizer);
      },
      sessions_);  // the manager ends its sessions when it stops
}

}  // namespace fencegate::lockservice
