#include "gateway/gateway_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/channel_credentials.h"
#include "common/server_setup.h"
#include "gateway/postgres_connection.h"
#include "gateway/postgres_storage.h"
#include "gateway/sqlite_storage.h"

namespace fencegate::gateway {
namespace {

// The backend `options` ask for; `description` says which, for logs.
// REQUIRES: options.Validate() is OK.
absl::StatusOr<std::unique_ptr<StorageBackend>> OpenStorage(
    const GatewayServerOptions& options, std::string* description) {
  if (options.storage.empty()) {
    *description = absl::StrCat("sqlite:", options.db_path);
    absl::StatusOr<std::unique_ptr<SqliteStorage>> sqlite =
        SqliteStorage::Open(options.db_path, options.read_connections);
    if (!sqlite.ok()) return sqlite.status();
    return std::unique_ptr<StorageBackend>(*std::move(sqlite));
  }
  absl::StatusOr<PostgresTarget> target = PostgresTarget::Parse(options.storage);
  if (!target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--storage: ", target.status().message()));
  }
  *description = absl::StrCat("postgres(", target->description(), ")");
  absl::StatusOr<std::unique_ptr<PostgresStorage>> postgres =
      PostgresStorage::Open(*target, options.read_connections);
  if (!postgres.ok()) return postgres.status();
  return std::unique_ptr<StorageBackend>(*std::move(postgres));
}

}  // namespace

absl::StatusOr<std::unique_ptr<GatewayServer>> GatewayServer::Start(
    const GatewayServerOptions& options) {
  if (absl::Status valid = options.Validate(); !valid.ok()) return valid;
  std::unique_ptr<GatewayServer> server(new GatewayServer());
  server->shutdown_grace_ = options.serving.shutdown_grace;
  absl::StatusOr<std::unique_ptr<StorageBackend>> storage =
      OpenStorage(options, &server->storage_description_);
  if (!storage.ok()) return storage.status();
  server->storage_ = *std::move(storage);
  if (!options.serving.signing_keys_path.empty()) {
    server->signing_keys_path_ = options.serving.signing_keys_path;
    absl::StatusOr<KeyRing> keys = KeyRing::Load(options.serving.signing_keys_path);
    if (!keys.ok()) return keys.status();
    server->signer_ = std::make_unique<TokenSigner>(*std::move(keys));
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.serving.tls);
  if (!credentials.ok()) return credentials.status();
  server->store_ = std::make_unique<FencedStore>(server->storage_.get(), options.limits,
                                                 server->signer_.get());
  if (!options.lockservice.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> lockservice_credentials =
        MakeChannelCredentials(options.lockservice_tls);
    if (!lockservice_credentials.ok()) return lockservice_credentials.status();
    FenceFollowerOptions follow;
    follow.lockservice = options.lockservice;
    follow.credentials = *lockservice_credentials;
    server->follower_ = std::make_unique<FenceFollower>(server->store_.get(), follow);
  }
  server->service_ =
      std::make_unique<GatewayServiceImpl>(server->store_.get(), options.session_limits);

  // The receive limit is large enough that an oversized value still arrives
  // and gets our INVALID_ARGUMENT naming the field and the limit.
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server = StartGrpcServer(
      options.serving.listen, server->service_.get(), &server->port_,
      options.serving.port_file,
      MaxReceiveMessageBytes(options.limits), *credentials);
  if (!grpc_server.ok()) return grpc_server.status();
  server->server_ = *std::move(grpc_server);
  return server;
}

GatewayServer::~GatewayServer() { Shutdown(); }

std::string GatewayServer::DescribeSigning() const {
  return signer_ == nullptr ? "off" : signer_->keys()->Describe();
}

absl::Status GatewayServer::ReloadSigningKeys() {
  if (signer_ == nullptr) {
    return absl::FailedPreconditionError(
        "signing is off (no --signing_keys); restart with a key file to turn it on");
  }
  absl::StatusOr<KeyRing> keys = KeyRing::Load(signing_keys_path_);
  if (!keys.ok()) return keys.status();
  signer_->Replace(*std::move(keys));
  return absl::OkStatus();
}

void GatewayServer::Shutdown() {
  if (server_ == nullptr) return;
  follower_.reset();  // before the store it raises fences in
  // Streams stop reading, answer what they read, and end; calls already
  // received still reach the store and wait for their commit.
  service_->CloseSessions();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(shutdown_grace_));
  server_.reset();
  store_.reset();  // commits and answers anything still queued
  storage_.reset();
}

}  // namespace fencegate::gateway
