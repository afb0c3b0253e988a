#include "gateway/gateway_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/server_setup.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

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

  EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &server->port_);
  // Large enough that an oversized value still arrives and gets our
  // INVALID_ARGUMENT naming the field and the limit.
  builder.SetMaxReceiveMessageSize(MaxReceiveMessageBytes(options.limits));
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.listen,
        "; is the address valid and the port free? (--listen)"));
  }
  absl::Status status = WritePortFile(options.port_file, server->port_);
  if (!status.ok()) return status;
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
