// ServerInfoService: fencegate.v1.ServerInfo (proto/fencegate/v1/
// server_info.proto), which tells a gRPC client the program, version and
// git sha of the server it talks to (common/build_info/build_info.h), and hands
// out the server's metrics (the text /metrics serves). StartGrpcServer
// (server_setup.h) registers one on every fencegate server.
//
// On gRPC's synchronous API: admin calls, rare, and its pollers do not
// disturb a completion-queue loop in the same process (measured; a
// callback service would: completion_queue_loop.h).
//
// Both calls need the admin permission when a policy is set
// (set_authorizer, --policy; docs/security.md, "Authorization").
//
// Ownership: `registry` (null: metrics are off) and the authorizer must
// outlive the service.
// Thread safety: thread-safe.
#ifndef FENCEGATE_COMMON_SERVER_SERVER_INFO_SERVICE_H_
#define FENCEGATE_COMMON_SERVER_SERVER_INFO_SERVICE_H_

#include "common/authz/authorizer.h"
#include "common/metrics/registry.h"
#include "fencegate/v1/server_info.grpc.pb.h"

namespace fencegate {

class ServerInfoService final : public fencegate::v1::ServerInfo::Service {
 public:
  explicit ServerInfoService(const metrics::Registry* registry = nullptr)
      : registry_(registry) {}

  // The policy both calls are checked against (admin); null: none. Call
  // before the server serves.
  void set_authorizer(const authz::Authorizer* authorizer) { authorizer_ = authorizer; }

  grpc::Status GetServerInfo(grpc::ServerContext* context,
                             const fencegate::v1::GetServerInfoRequest* request,
                             fencegate::v1::GetServerInfoResponse* response) override;
  // FAILED_PRECONDITION without a registry.
  grpc::Status GetMetrics(grpc::ServerContext* context,
                          const fencegate::v1::GetMetricsRequest* request,
                          fencegate::v1::GetMetricsResponse* response) override;

 private:
  const metrics::Registry* const registry_;
  const authz::Authorizer* authorizer_ = nullptr;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_SERVER_INFO_SERVICE_H_
