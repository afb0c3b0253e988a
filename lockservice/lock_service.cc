#include "lockservice/lock_service.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/tls.h"
#include "common/validation.h"
#include "lockservice/fence_watch.h"
#include "lockservice/forwarding_lock_service.h"
#include "lockservice/lock_requests.h"

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

absl::StatusOr<std::string> LockServiceImpl::Authorize(
    grpc::CallbackServerContext* context, const std::string& resource, uint64_t token,
    const v1::TokenSignature& signature) {
  absl::Status verified =
      CheckTokenSignature(signer_, manager_->limits(), resource, token, signature);
  if (!verified.ok()) return verified;
  return CallerSubject(context);
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

grpc::ServerUnaryReactor* LockServiceImpl::Acquire(
    grpc::CallbackServerContext* context, const v1::AcquireRequest* request,
    v1::AcquireResponse* response) {
  LockManager::CallId id = manager_->NewCallId();
  auto* reactor = new AcquireReactor(manager_, id);
  if (absl::Status s = RejectUnknownFields(*request); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  if (signer_ != nullptr) {
    // A grant nobody can use would block the resource for its TTL.
    if (absl::Status s = signer_->CheckCanSign(); !s.ok()) {
      reactor->Finish(ToGrpcStatus(absl::UnavailableError(
          absl::StrCat("the lock service cannot sign grants: ", s.message()))));
      return reactor;
    }
  }
  AcquireArgs args = AcquireArgsFromProto(*request);
  if (identity_.mutual_tls) {
    // The identity is the certificate's; the request only tells apart
    // processes that share a certificate.
    absl::StatusOr<std::string> subject = CallerSubject(context);
    if (!subject.ok()) {
      reactor->Finish(ToGrpcStatus(subject.status()));
      return reactor;
    }
    args.holder =
        args.holder.empty() ? *subject : absl::StrCat(*subject, "/", args.holder);
  }
  const TokenSigner* signer = signer_;
  std::string resource = args.resource;
  manager_->Acquire(id, std::move(args),
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
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Renew(
    grpc::CallbackServerContext* context, const v1::RenewRequest* request,
    v1::RenewResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s = RejectUnknownFields(*request); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  RenewArgs args = RenewArgsFromProto(*request);
  absl::StatusOr<std::string> caller =
      Authorize(context, args.resource, args.token, request->signature());
  if (!caller.ok()) {
    reactor->Finish(ToGrpcStatus(caller.status()));
    return reactor;
  }
  args.caller = *std::move(caller);
  const TokenSigner* signer = signer_;
  std::string resource = args.resource;
  const uint64_t token = args.token;
  manager_->Renew(std::move(args), [reactor, response, signer, token,
                                    resource = std::move(resource)](
                                       absl::StatusOr<RenewResult> result) {
    if (result.ok()) FillRenewResponse(signer, resource, token, *result, response);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Release(
    grpc::CallbackServerContext* context, const v1::ReleaseRequest* request,
    v1::ReleaseResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s = RejectUnknownFields(*request); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  ReleaseArgs args = ReleaseArgsFromProto(*request);
  absl::StatusOr<std::string> caller =
      Authorize(context, args.resource, args.token, request->signature());
  if (!caller.ok()) {
    reactor->Finish(ToGrpcStatus(caller.status()));
    return reactor;
  }
  args.caller = *std::move(caller);
  manager_->Release(std::move(args),
                    [reactor, response](absl::StatusOr<ReleaseResult> result) {
                      if (result.ok()) FillReleaseResponse(*result, response);
                      reactor->Finish(ToGrpcStatus(result.status()));
                    });
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Describe(
    grpc::CallbackServerContext* context, const v1::DescribeRequest* request,
    v1::DescribeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s = RejectUnknownFields(*request); !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  manager_->Describe(request->resource(), [reactor, response](
                                              absl::StatusOr<ResourceInfo> info) {
    if (info.ok()) FillDescribeResponse(*info, response);
    reactor->Finish(ToGrpcStatus(info.status()));
  });
  return reactor;
}

grpc::ServerWriteReactor<v1::WatchFencesResponse>* LockServiceImpl::WatchFences(
    grpc::CallbackServerContext* context, const v1::WatchFencesRequest* request) {
  if (absl::Status s = RejectUnknownFields(*request); !s.ok()) {
    // A reactor that only finishes.
    class Refused final : public grpc::ServerWriteReactor<v1::WatchFencesResponse> {
     public:
      explicit Refused(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
      void OnDone() override { delete this; }
    };
    return new Refused(s);
  }
  return StartFenceWatch(*request, store_, feed_);
}

}  // namespace fencegate::lockservice
