#include "gateway/gateway_server.h"

#include <chrono>

#include "common/server_setup.h"

namespace fencegate::gateway {

absl::StatusOr<std::unique_ptr<GatewayServer>> GatewayServer::Start(
    const GatewayServerOptions& options) {
  std::unique_ptr<GatewayServer> server(new GatewayServer());
  server->shutdown_grace_ = options.shutdown_grace;
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(options.db_path, options.read_connections);
  if (!storage.ok()) return storage.status();
  server->storage_ = *std::move(storage);
  server->store_ =
      std::make_unique<FencedStore>(server->storage_.get(), options.limits);
  server->service_ = std::make_unique<GatewayServiceImpl>(server->store_.get());

  // The receive limit is large enough that an oversized value still arrives
  // and gets our INVALID_ARGUMENT naming the field and the limit.
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server =
      StartGrpcServer(options.listen, server->service_.get(), &server->port_,
                      options.port_file, MaxReceiveMessageBytes(options.limits));
  if (!grpc_server.ok()) return grpc_server.status();
  server->server_ = *std::move(grpc_server);
  return server;
}

GatewayServer::~GatewayServer() { Shutdown(); }

void GatewayServer::Shutdown() {
  if (server_ == nullptr) return;
  // Calls already received still reach the store and wait for their commit.
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(shutdown_grace_));
  server_.reset();
  store_.reset();  // commits and answers anything still queued
  storage_.reset();
}

}  // namespace fencegate::gateway
