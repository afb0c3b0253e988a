// LockServiceImpl's election calls (lock_service.h; docs/semantics.md,
// "Elections"): Campaign, Proclaim, Leader, Resign and Observe, each on the
// path of the lease calls (unknown fields, the policy, the args, the
// manager, the reply: election_requests.h).
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
  StartAcquire(context, id, reactor, AllowedArgs<CampaignArgsFor>(context, *request),
               response);
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Proclaim(grpc::CallbackServerContext* context,
                                                    const v1::ProclaimRequest* request,
                                                    v1::ProclaimResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ProclaimArgs> args = AllowedArgs<ProclaimArgsFor>(context, *request);
  if (!args.ok()) return Finished(reactor, args.status());
  manager_->Proclaim(
      *std::move(args),
      Answer<ProclaimResult>(reactor, [response](const ProclaimResult& result) {
        response->set_seq(result.seq);
      }));
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Leader(grpc::CallbackServerContext* context,
                                                  const v1::LeaderRequest* request,
                                                  v1::LeaderResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status refused = Authorized(context, *request);
  if (!refused.ok()) return Finished(reactor, refused);
  manager_->Leader(
      request->election(),
      Answer<ElectionChange>(reactor, [response](const ElectionChange& state) {
        FillElectionChange(state, response->mutable_state());
      }));
  return reactor;
}

grpc::ServerUnaryReactor* LockServiceImpl::Resign(grpc::CallbackServerContext* context,
                                                  const v1::ResignRequest* request,
                                                  v1::ResignResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ReleaseArgs> args = AllowedArgs<ResignArgsFor>(context, *request);
  if (!args.ok()) return Finished(reactor, args.status());
  manager_->Release(*std::move(args),
                    Answer<ReleaseResult>(reactor, [](const ReleaseResult&) {}));
  return reactor;
}

grpc::ServerWriteReactor<v1::ObserveResponse>* LockServiceImpl::Observe(
    grpc::CallbackServerContext* context, const v1::ObserveRequest* request) {
  absl::Status refused = Authorized(context, *request);
  if (!refused.ok()) return RefuseElectionWatch(refused);
  return StartElectionWatch(*request, manager_, observers_);
}

}  // namespace fencegate::lockservice
