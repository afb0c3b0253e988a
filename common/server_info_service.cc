#include "common/server_info_service.h"

#include <string>

#include "common/build_info.h"

namespace fencegate {

grpc::ServerUnaryReactor* ServerInfoService::GetServerInfo(
    grpc::CallbackServerContext* context, const fencegate::v1::GetServerInfoRequest*,
    fencegate::v1::GetServerInfoResponse* response) {
  response->set_program(ProgramName());
  response->set_version(std::string(ProjectVersion()));
  response->set_git_sha(std::string(GitSha()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

ServerInfoService& ProcessServerInfoService() {
  static ServerInfoService* service = new ServerInfoService();
  return *service;
}

}  // namespace fencegate
