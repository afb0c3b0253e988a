#include "lockservice/lock_server.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/etcd/etcd_client.h"
#include "common/log.h"
#include "common/server_setup.h"
#include "grpcpp/health_check_service_interface.h"
#include "lockservice/etcd/etcd_lock_node.h"
#include "lockservice/lock_service.h"
#include "lockservice/routing_lock_service.h"

namespace fencegate::lockservice {
namespace {

// "host:port" of `listen` with the bound port; a wildcard host has no
// address another machine could call.
absl::StatusOr<std::string> AdvertisedAddress(const std::string& listen, int port) {
  const size_t colon = listen.rfind(':');
  const std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--advertise is required when --listen (", listen,
        ") has no specific host: give the host:port other instances reach this one at"));
  }
  return absl::StrCat(host, ":", port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LockServer>> LockServer::Start(
    const LockServerOptions& options) {
  std::unique_ptr<LockServer> server(new LockServer());
  server->shutdown_grace_ = options.shutdown_grace;
  server->clock_ = NewRealClock();
  absl::Status status = options.store == "sqlite" ? server->StartSqlite(options)
                                                  : server->StartEtcd(options);
  if (!status.ok()) return status;
  return server;
}

absl::Status LockServer::StartSqlite(const LockServerOptions& options) {
  absl::StatusOr<std::unique_ptr<SqliteLockStore>> store =
      SqliteLockStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  store_ = *std::move(store);
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(store_.get(), clock_.get(), options.limits);
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);
  max_batch_ = options.limits.max_batch;
  service_ = std::make_unique<LockServiceImpl>(manager_);
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server =
      StartGrpcServer(options.listen, service_.get(), &port_, options.port_file);
  if (!grpc_server.ok()) return grpc_server.status();
  server_ = *std::move(grpc_server);
  return absl::OkStatus();
}

absl::Status LockServer::StartEtcd(const LockServerOptions& options) {
  absl::StatusOr<std::vector<std::string>> endpoints =
      etcd::ParseEtcdUrl(options.store, "--store");
  if (!endpoints.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        endpoints.status().message(), " (or --store=sqlite, the default)"));
  }
  if (options.etcd_session_ttl < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--etcd_session_ttl must be at least 1s (etcd leases have whole seconds)");
  }
  if (options.etcd_max_txn_ops < 2 + kEtcdMaxOpsPerItem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--etcd_max_txn_ops must be at least ", 2 + kEtcdMaxOpsPerItem,
        " (it is etcd's --max-txn-ops, default 128)"));
  }
  if (options.etcd_prefix.empty()) {
    return absl::InvalidArgumentError("--etcd_prefix must not be empty");
  }
  EtcdLockNodeOptions node;
  node.endpoints = *std::move(endpoints);
  node.session_ttl = options.etcd_session_ttl;
  node.store.prefix = options.etcd_prefix;
  node.limits = options.limits;
  // One batch is one txn (see kEtcdMaxOpsPerItem).
  node.limits.max_batch = std::min<size_t>(
      options.limits.max_batch,
      static_cast<size_t>((options.etcd_max_txn_ops - 2) / kEtcdMaxOpsPerItem));
  max_batch_ = node.limits.max_batch;

  router_ = std::make_unique<RoutingLockService>();
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server =
      StartGrpcServer(options.listen, router_.get(), &port_, options.port_file);
  if (!grpc_server.ok()) return grpc_server.status();
  server_ = *std::move(grpc_server);
  server_->GetHealthCheckService()->SetServingStatus(false);  // until a leader is known

  if (options.advertise.empty()) {
    absl::StatusOr<std::string> advertise = AdvertisedAddress(options.listen, port_);
    if (!advertise.ok()) return advertise.status();
    node.advertise = *advertise;
  } else {
    node.advertise = options.advertise;
  }
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  node_ = std::make_unique<EtcdLockNode>(
      std::move(node), clock_.get(), router_.get(),
      [health](bool serving) { health->SetServingStatus(serving); });
  node_->Start();
  return absl::OkStatus();
}

LockServer::~LockServer() { Shutdown(); }

void LockServer::Shutdown() {
  if (server_ == nullptr) return;
  if (node_ != nullptr) node_->Stop();  // hands over to another instance
  if (manager_ != nullptr) manager_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(shutdown_grace_));
  server_.reset();
  node_.reset();
  service_.reset();
  manager_.reset();  // flushes the last batch
}

}  // namespace fencegate::lockservice
