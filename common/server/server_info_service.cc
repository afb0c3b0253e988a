#include "common/server/server_info_service.h"

#include <string>

#include "common/build_info/build_info.h"
#include "common/grpc/grpc_status.h"
#include "common/server/tls.h"

namespace fencegate {

grpc::Status ServerInfoService::GetServerInfo(
    grpc::ServerContext* context, const fencegate::v1::GetServerInfoRequest*,
    fencegate::v1::GetServerInfoResponse* response) {
  if (absl::Status allowed = authz::Authorize(authorizer_, PeerSubject(*context),
                                              authz::Permission::kAdmin, "");
      !allowed.ok()) {
    return ToGrpcStatus(allowed);
  }
  response->set_program(ProgramName());
  response->set_version(std::string(ProjectVersion()));
  response->set_git_sha(std::string(GitSha()));
  return grpc::Status::OK;
}

grpc::Status ServerInfoService::GetMetrics(grpc::ServerContext* context,
                                           const fencegate::v1::GetMetricsRequest*,
                                           fencegate::v1::GetMetricsResponse* response) {
  if (absl::Status allowed = authz::Authorize(authorizer_, PeerSubject(*context),
                                              authz::Permission::kAdmin, "");
      !allowed.ok()) {
    return ToGrpcStatus(allowed);
  }
  if (registry_ == nullptr) {
    return grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        "this server runs with metrics off (--metrics_listen= is empty); restart it "
        "with --metrics_listen to read its metrics");
  }
  response->set_exposition(registry_->Render());
  return grpc::Status::OK;
}

}  // namespace fencegate
