#include "lockservice/lock_server.h"

#include <chrono>

#include "common/server_setup.h"

namespace fencegate::lockservice {

absl::StatusOr<std::unique_ptr<LockServer>> LockServer::Start(
    const LockServerOptions& options) {
  std::unique_ptr<LockServer> server(new LockServer());
  server->shutdown_grace_ = options.shutdown_grace;
  server->clock_ = NewRealClock();
  absl::StatusOr<std::unique_ptr<SqliteLockStore>> store =
      SqliteLockStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  server->store_ = *std::move(store);
  absl::StatusOr<std::unique_ptr<LockManager>> manager = LockManager::Create(
      server->store_.get(), server->clock_.get(), options.limits);
  if (!manager.ok()) return manager.status();
  server->manager_ = *std::move(manager);
  server->service_ = std::make_unique<LockServiceImpl>(server->manager_.get());

  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server = StartGrpcServer(
      options.listen, server->service_.get(), &server->port_, options.port_file);
  if (!grpc_server.ok()) return grpc_server.status();
  server->server_ = *std::move(grpc_server);
  return server;
}

LockServer::~LockServer() { Shutdown(); }

void LockServer::Shutdown() {
  if (server_ == nullptr) return;
  manager_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(shutdown_grace_));
  server_.reset();
  manager_.reset();  // flushes the last batch
}

}  // namespace fencegate::lockservice
