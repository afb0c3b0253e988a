// LockServiceImpl's election calls (lock_service.h; docs/semantics.md,
// "Elections"): Campaign, Proclaim, Leader, Resign and Observe, each on the
// path of the lease calls (unknown fields, the policy, the args, the
// manager, the reply: election_requests.h).
#include "common/core/validation.h"
#include "common/grpc/grpc_status.h"
#include "lockservice/core/election_requests.h"
#include "lockservice/core/lock_call_authz.h"
#include "lockservice/server/election_watch.h"
#include "lockservice/server/lock_service.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;

}  // namespace

grpc::ServerUnaryReactor* LockServiceImpl::Campaign(grpc::CallbackServerContext* context,
                                                    const v1::CampaignRequest* request,
                                                    v1::AcquireResponse* response) {
  LockManager::CallId id = manager_->NewCallId();
  grpc::ServerUnaryReactor* reactor = NewAcquireReactor(id);
  absl::Status refused = RejectUnknownFields(*request);
  absl::StatusOr<Caller> caller =
      refused.ok() ? AllowedCaller(context, *request) : absl::StatusOr<Caller>(refused);
  StartAcquire(context, id, reactor,
               caller.ok()
                   ? CampaignArgsFor(*request, signer_, manager_->limits(), *caller)
                   : caller.status(),
               response);
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Proclaim(grpc::CallbackServerContext* context,
                                                    const v1::ProclaimRequest* request,
                                                    v1::ProclaimResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status refused = RejectUnknownFields(*request);
  absl::StatusOr<Caller> caller =
      refused.ok() ? AllowedCaller(context, *request) : absl::StatusOr<Caller>(refused);
  absl::StatusOr<ProclaimArgs> args =
      caller.ok() ? ProclaimArgsFor(*request, signer_, manager_->limits(), *caller)
                  : caller.status();
  if (!args.ok()) {
    reactor->Finish(ToGrpcStatus(args.status()));
    return reactor;
  }
  manager_->Proclaim(*std::move(args),
                     [reactor, response](absl::StatusOr<ProclaimResult> result) {
                       if (result.ok()) response->set_seq(result->seq);
                       reactor->Finish(ToGrpcStatus(result.status()));
                     });
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Leader(grpc::CallbackServerContext* context,
                                                  const v1::LeaderRequest* request,
                                                  v1::LeaderResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status refused = RejectUnknownFields(*request);
  if (refused.ok()) refused = Authorized(context, *request);
  if (!refused.ok()) {
    reactor->Finish(ToGrpcStatus(refused));
    return reactor;
  }
  manager_->Leader(request->election(),
                   [reactor, response](absl::StatusOr<ElectionChange> state) {
                     if (state.ok())
                       FillElectionChange(*state, response->mutable_state());
                     reactor->Finish(ToGrpcStatus(state.status()));
                   });
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Resign(grpc::CallbackServerContext* context,
                                                  const v1::ResignRequest* request,
                                                  v1::ResignResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status refused = RejectUnknownFields(*request);
  absl::StatusOr<Caller> caller =
      refused.ok() ? AllowedCaller(context, *request) : absl::StatusOr<Caller>(refused);
  absl::StatusOr<ReleaseArgs> args =
      caller.ok() ? ResignArgsFor(*request, signer_, manager_->limits(), *caller)
                  : caller.status();
  if (!args.ok()) {
    reactor->Finish(ToGrpcStatus(args.status()));
    return reactor;
  }
  manager_->Release(*std::move(args), [reactor](absl::StatusOr<ReleaseResult> result) {
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerWriteReactor<v1::ObserveResponse>* LockServiceImpl::Observe(
    grpc::CallbackServerContext* context, const v1::ObserveRequest* request) {
  absl::Status refused = RejectUnknownFields(*request);
  if (refused.ok()) refused = Authorized(context, *request);
  if (!refused.ok()) return RefuseElectionWatch(refused);
  return StartElectionWatch(*request, manager_, observers_);
}

}  // namespace fencegate::lockservice
