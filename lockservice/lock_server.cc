#include "lockservice/lock_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
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
  if (!options.signing_keys_path.empty()) {
    server->signing_keys_path_ = options.signing_keys_path;
    absl::StatusOr<KeyRing> keys = KeyRing::Load(options.signing_keys_path);
    if (!keys.ok()) return keys.status();
    if (keys->signing_key() == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.signing_keys_path,
          ": no key is marked 'sign'; the lock service needs one to sign grants"));
    }
    server->signer_ = std::make_unique<TokenSigner>(*std::move(keys));
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(server->store_.get(), server->clock_.get(), options.limits,
                          &server->feed_);
  if (!manager.ok()) return manager.status();
  server->manager_ = *std::move(manager);
  server->service_ = std::make_unique<LockServiceImpl>(
      server->manager_.get(), server->store_.get(), &server->feed_,
      server->signer_.get(), options.tls.mutual());

  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server =
      StartGrpcServer(options.listen, server->service_.get(), &server->port_,
                      options.port_file, /*max_receive_bytes=*/0, *credentials);
  if (!grpc_server.ok()) return grpc_server.status();
  server->server_ = *std::move(grpc_server);
  return server;
}

LockServer::~LockServer() { Shutdown(); }

std::string LockServer::DescribeSigning() const {
  return signer_ == nullptr ? "off" : signer_->keys()->Describe();
}

absl::Status LockServer::ReloadSigningKeys() {
  if (signer_ == nullptr) {
    return absl::FailedPreconditionError(
        "signing is off (no --signing_keys); restart with a key file to turn it on");
  }
  absl::StatusOr<KeyRing> keys = KeyRing::Load(signing_keys_path_);
  if (!keys.ok()) return keys.status();
  if (keys->signing_key() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(signing_keys_path_, ": no key is marked 'sign'"));
  }
  signer_->Replace(*std::move(keys));
  return absl::OkStatus();
}

void LockServer::Shutdown() {
  if (server_ == nullptr) return;
  feed_.Close();  // ends WatchFences streams, which would outlast the grace
  manager_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(shutdown_grace_));
  server_.reset();
  manager_.reset();  // flushes the last batch
}

}  // namespace fencegate::lockservice
