#include "lockservice/lock_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/server_setup.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

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

  EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &server->port_);
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
