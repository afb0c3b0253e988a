// LockServiceCalls' election calls (lock_service_calls.h; docs/semantics.md,
// "Elections"): Campaign, Proclaim, Leader, Resign and Observe, each on the
// path of the lease calls (unknown fields, the policy, the args, the
// manager, the reply: election_requests.h).
#include "common/grpc/grpc_status.h"
#include "lockservice/core/election_requests.h"
#include "lockservice/core/lock_call_authz.h"
#include "lockservice/server/election_watch.h"
#include "lockservice/server/lock_service_calls.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

void LockServiceCalls::Campaign(grpc::ServerContextBase& context,
                                const v1::CampaignRequest& request,
                                v1::AcquireResponse* response, UnaryReply* reply) {
  StartAcquire(AllowedArgs<CampaignArgsFor>(context, request), response, reply);
}

void LockServiceCalls::Proclaim(grpc::ServerContextBase& context,
                                const v1::ProclaimRequest& request,
                                v1::ProclaimResponse* response, UnaryReply* reply) {
  absl::StatusOr<ProclaimArgs> args = AllowedArgs<ProclaimArgsFor>(context, request);
  if (!args.ok()) return reply->Finish(args.status());
  manager_->Proclaim(
      *std::move(args),
      Answer<ProclaimResult>(reply, [response](const ProclaimResult& result) {
        response->set_seq(result.seq);
      }));
}

void LockServiceCalls::Leader(grpc::ServerContextBase& context,
                              const v1::LeaderRequest& request,
                              v1::LeaderResponse* response, UnaryReply* reply) {
  if (absl::Status refused = Authorized(context, request); !refused.ok()) {
    return reply->Finish(refused);
  }
  manager_->Leader(request.election(),
                   Answer<ElectionChange>(reply, [response](const ElectionChange& state) {
                     FillElectionChange(state, response->mutable_state());
                   }));
}

void LockServiceCalls::Resign(grpc::ServerContextBase& context,
                              const v1::ResignRequest& request,
                              v1::ResignResponse* /*response*/, UnaryReply* reply) {
  absl::StatusOr<ReleaseArgs> args = AllowedArgs<ResignArgsFor>(context, request);
  if (!args.ok()) return reply->Finish(args.status());
  manager_->Release(*std::move(args),
                    Answer<ReleaseResult>(reply, [](const ReleaseResult&) {}));
}

ResponseStreamEvents* LockServiceCalls::Observe(
    grpc::ServerContextBase& context, const v1::ObserveRequest& request,
    ResponseStream<v1::ObserveResponse>* stream) {
  if (absl::Status refused = Authorized(context, request); !refused.ok()) {
    stream->Finish(ToGrpcStatus(refused));
    return nullptr;
  }
  return StartElectionWatch(request, manager_, observers_, stream);
}

}  // namespace fencegate::lockservice
