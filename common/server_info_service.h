// ServerInfoService: fencegate.v1.ServerInfo (proto/fencegate/v1/
// server_info.proto), which tells a gRPC client the program, version and
// git sha of the server it talks to (common/build_info.h). StartGrpcServer
// (server_setup.h) registers it on every fencegate server.
//
// Thread safety: stateless; one instance serves any number of servers.
#ifndef FENCEGATE_COMMON_SERVER_INFO_SERVICE_H_
#define FENCEGATE_COMMON_SERVER_INFO_SERVICE_H_

#include "fencegate/v1/server_info.grpc.pb.h"

namespace fencegate {

class ServerInfoService final : public fencegate::v1::ServerInfo::CallbackService {
 public:
  grpc::ServerUnaryReactor* GetServerInfo(
      grpc::CallbackServerContext* context,
      const fencegate::v1::GetServerInfoRequest* request,
      fencegate::v1::GetServerInfoResponse* response) override;
};

// The process's instance, never destroyed (servers may outlive main's locals).
ServerInfoService& ProcessServerInfoService();

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_INFO_SERVICE_H_
