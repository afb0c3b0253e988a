#include "common/server/server_info_service.h"

#include <string>

#include "common/build_info/build_info.h"
#include "common/grpc/grpc_status.h"
#include "common/server/tls.h"

namespace fencegate {

grpc::ServerUnaryReactor* ServerInfoService::GetServerInfo(
    grpc::CallbackServerContext* context, const fencegate::v1::GetServerInfoRequest*,
    fencegate::v1::GetServerInfoResponse* response) {
  if (absl::Status allowed = authz::Authorize(authorizer_, PeerSubject(*context),
                                              authz::Permission::kAdmin, "");
      !allowed.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpcStatus(allowed));
    return reactor;
  }
  response->set_program(ProgramName());
  response->set_version(std::string(ProjectVersion()));
  response->set_git_sha(std::string(GitSha()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ServerInfoService::GetMetrics(
    grpc::CallbackServerContext* context, const fencegate::v1::GetMetricsRequest*,
    fencegate::v1::GetMetricsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status allowed = authz::Authorize(authorizer_, PeerSubject(*context),
                                              authz::Permission::kAdmin, "");
      !allowed.ok()) {
    reactor->Finish(ToGrpcStatus(allowed));
    return reactor;
  }
  if (registry_ == nullptr) {
    reactor->Finish(grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        "this server runs with metrics off (--metrics_listen= is empty); restart it "
        "with --metrics_listen to read its metrics"));
    return reactor;
  }
  response->set_exposition(registry_->Render());
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace fencegate
