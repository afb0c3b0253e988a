#include "lockservice/server/lock_server.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/base/log.h"
#include "common/grpc/channel_credentials.h"
#include "common/server/grpc_shutdown.h"
#include "common/server/server_policy.h"
#include "common/server/server_setup.h"
#include "grpcpp/health_check_service_interface.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/etcd_lock_store.h"
#include "lockservice/server/etcd_lock_node.h"
#include "lockservice/server/lock_status_page.h"
#include "lockservice/server/loop_lock_service.h"
#include "lockservice/server/routing_lock_service.h"

namespace fencegate::lockservice {
namespace {

// How long the start waits for etcd to say which state format it holds.
constexpr absl::Duration kStartFormatCheckTimeout = absl::Seconds(2);

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
  if (absl::Status valid = options.Validate(); !valid.ok()) return valid;
  std::unique_ptr<LockServer> server(new LockServer(options));
  server->shutdown_grace_ = options.serving.shutdown_grace;
  server->observability_ = std::make_unique<ServerObservability>(
      options.serving, std::vector<std::string>{"fencegate.v1.LockService"});
  if (metrics::Registry* registry = server->observability_->registry()) {
    server->manager_metrics_ = LockManagerMetrics::Register(*registry);
    if (options.store != "sqlite") {
      server->leadership_metrics_ = LeadershipMetrics::Register(*registry);
    }
    LockServer* raw = server.get();
    AddLockStateGauges(*registry, [raw]() -> std::optional<LockStateFigures> {
      std::shared_ptr<LockManager> manager = raw->CurrentManager();
      if (manager == nullptr) return std::nullopt;
      return manager->Figures();
    });
  }
  absl::StatusOr<std::unique_ptr<authz::Authorizer>> authorizer =
      LoadServerPolicy(options.serving, *server->observability_);
  if (!authorizer.ok()) return authorizer.status();
  server->authorizer_ = *std::move(authorizer);
  server->clock_ = NewRealClock();
  const std::string& keys_path = options.serving.signing_keys_path;
  if (!keys_path.empty()) {
    server->signing_keys_path_ = keys_path;
    absl::StatusOr<KeyRing> keys = KeyRing::Load(keys_path);
    if (!keys.ok()) return keys.status();
    if (keys->signing_key() == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          keys_path,
          ": no key is marked 'sign'; the lock service needs one to sign grants"));
    }
    server->signer_ = std::make_unique<TokenSigner>(*std::move(keys));
  }
  absl::Status status;
  if (options.store == "sqlite") {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
        MakeServerCredentials(options.serving.tls);
    if (!credentials.ok()) return credentials.status();
    status = server->StartSqlite(options, *std::move(credentials));
  } else {
    status = server->StartEtcd(options);
  }
  if (!status.ok()) return status;
  LockServer* raw = server.get();
  status = server->observability_->StartListener(
      [raw, registry = server->observability_->registry()](const HttpRequest& request) {
        std::shared_ptr<LockManager> manager = raw->CurrentManager();
        return RenderLockStatusPage(request, *registry, manager.get(), raw->Role(),
                                    /*hide_resources=*/raw->authorizer_ != nullptr);
      });
  if (!status.ok()) return status;
  return server;
}

std::shared_ptr<LockManager> LockServer::CurrentManager() const {
  if (node_ != nullptr) return node_->CurrentManager();
  return manager_;
}

std::string LockServer::Role() const {
  if (node_ == nullptr) return "single instance (SQLite)";
  return node_->CurrentManager() != nullptr ? "leader (etcd)"
                                            : "standby (etcd): forwards to the leader";
}

absl::Status LockServer::StartSqlite(
    const LockServerOptions& options,
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  absl::StatusOr<StateLock> state_lock =
      StateLock::Acquire(options.db_path, "fencegate-lockservice");
  if (!state_lock.ok()) return state_lock.status();
  state_lock_.emplace(*std::move(state_lock));
  absl::StatusOr<std::unique_ptr<SqliteLockStore>> store =
      SqliteLockStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  store_ = *std::move(store);
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(store_.get(), clock_.get(), options.limits, &feed_,
                          observability_->enabled() ? &manager_metrics_ : nullptr);
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);
  max_batch_ = options.limits.max_batch;
  service_ = std::make_unique<LoopLockService>(
      manager_, store_.get(), &feed_, signer_.get(),
      CallerIdentity{options.serving.tls.mutual(), "", authorizer_.get()},
      options.session_limits, &sessions_, &fence_watchers_, &observers_);
  health_ = std::make_unique<HealthService>();
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  const CompletionQueueServing queue_serving{health_.get(), &cq};
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server = StartGrpcServer(
      options.serving.listen, service_->service(), &port_, options.serving.port_file,
      /*max_receive_bytes=*/0, std::move(credentials), observability_.get(),
      &unary_calls_, &queue_serving);
  if (!grpc_server.ok()) return grpc_server.status();
  server_ = *std::move(grpc_server);
  // Every call and stream is an event of this loop, which commits what
  // each burst of them queued (commit_bursts.h).
  bursts_ =
      std::make_unique<CommitBursts>([raw = manager_.get()] { return raw->Arriving(); });
  service_->Serve(cq.get());
  health_->Serve(cq.get());
  loop_ =
      std::make_unique<CompletionQueueLoop>(std::move(cq), bursts_.get(), "fg-lock-loop");
  return absl::OkStatus();
}

absl::Status LockServer::StartEtcd(const LockServerOptions& options) {
  // Validate() checked the URL.
  absl::StatusOr<std::vector<std::string>> endpoints =
      etcd::ParseEtcdUrl(options.store, "--store");
  if (!endpoints.ok()) return endpoints.status();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.serving.tls);
  if (!credentials.ok()) return credentials.status();
  // Standbys forward to the leader over TLS too, as a client of it.
  std::shared_ptr<grpc::ChannelCredentials> peer_credentials;
  const ServerTlsFiles& tls = options.serving.tls;
  CallerIdentity identity{tls.mutual(), "", authorizer_.get()};
  if (tls.enabled()) {
    // Validate() checked that there is a CA.
    const std::string ca =
        options.peer_tls_ca.empty() ? tls.client_ca : options.peer_tls_ca;
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> peers =
        MakeChannelCredentials(ClientTlsFiles{ca, tls.cert, tls.key});
    if (!peers.ok()) return peers.status();
    peer_credentials = *std::move(peers);
    if (identity.mutual_tls) {
      absl::StatusOr<std::string> subject = CertificateSubject(tls.cert);
      if (!subject.ok()) return subject.status();
      identity.peer_subject = *std::move(subject);
    }
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> etcd_credentials =
      MakeChannelCredentials(options.etcd_tls);
  if (!etcd_credentials.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--etcd_tls_*: ", etcd_credentials.status().message()));
  }
  // State of a newer format stops the start here, before anything serves
  // (etcd_lock_store.h). An etcd that does not answer yet stops nothing:
  // each term checks the format again as it loads.
  {
    etcd::EtcdClientOptions client_options;
    client_options.endpoints = *endpoints;
    if (options.etcd_tls.enabled()) client_options.credentials = *etcd_credentials;
    etcd::EtcdClient client(std::move(client_options));
    absl::Status format = CheckEtcdStateFormat(client, options.etcd_prefix,
                                               absl::Now() + kStartFormatCheckTimeout);
    if (absl::IsFailedPrecondition(format) || absl::IsDataLoss(format)) return format;
    if (!format.ok()) {
      LogWarning(
          "etcd did not answer the state-format check at start (%s); each term "
          "checks it as it loads",
          format.ToString());
    }
  }
  EtcdLockNodeOptions node;
  node.endpoints = *std::move(endpoints);
  node.session_ttl = options.etcd_session_ttl;
  node.store.prefix = options.etcd_prefix;
  node.limits = options.limits;
  node.session_limits = options.session_limits;
  node.sessions = &sessions_;
  node.fence_watchers = &fence_watchers_;
  node.observers = &observers_;
  node.signer = signer_.get();
  node.identity = identity;
  if (options.etcd_tls.enabled()) node.etcd_credentials = *etcd_credentials;
  if (observability_->enabled()) {
    node.manager_metrics = &manager_metrics_;
    node.leadership_metrics = &leadership_metrics_;
  }
  // One batch is one txn (see EtcdMaxBatch()).
  node.limits.max_batch =
      std::min<size_t>(options.limits.max_batch, EtcdMaxBatch(options.etcd_max_txn_ops));
  max_batch_ = node.limits.max_batch;

  router_ = std::make_unique<RoutingLockService>(std::move(peer_credentials));
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server = StartGrpcServer(
      options.serving.listen, router_.get(), &port_, options.serving.port_file,
      /*max_receive_bytes=*/0, *std::move(credentials), observability_.get(),
      &unary_calls_);
  if (!grpc_server.ok()) return grpc_server.status();
  server_ = *std::move(grpc_server);
  server_->GetHealthCheckService()->SetServingStatus(false);  // until a leader is known

  if (options.advertise.empty()) {
    absl::StatusOr<std::string> advertise =
        AdvertisedAddress(options.serving.listen, port_);
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

LockServer::LockServer(const LockServerOptions& options)
    : sessions_(options.max_sessions),
      fence_watchers_(options.max_fence_watchers, "WatchFences streams",
                      "--max_fence_watchers",
                      "Each gateway needs one; stop followers that are not needed, or "
                      "retry later or on another instance"),
      observers_(options.max_election_observers, "Observe streams",
                 "--max_election_observers",
                 "Stop observers that are not needed, or retry later") {}
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

absl::Status LockServer::ReloadPolicy() { return ReloadServerPolicy(authorizer_.get()); }

std::string LockServer::DescribePolicy() const {
  return DescribeServerPolicy(authorizer_.get());
}

void LockServer::Shutdown() {
  if (server_ == nullptr) return;
  // First: a scrape or page in flight ends while what it reads is alive.
  observability_->StopListener();
  if (node_ != nullptr) node_->Stop();  // hands over to another instance
  feed_.Close();  // ends WatchFences streams, which would outlast the grace
  // Parked Acquires end with UNAVAILABLE; Session streams stop reading,
  // answer what they read and end with UNAVAILABLE.
  const size_t ended = sessions_.live();
  if (manager_ != nullptr) manager_->Shutdown();
  if (router_ != nullptr) router_->SetLeader("");  // ends forwarded streams
  const absl::Time deadline = absl::Now() + shutdown_grace_;
  if (health_ != nullptr) health_->Shutdown();  // ends its Watch streams
  sessions_.AwaitEnded(deadline);               // why: StreamRegistry::AwaitEnded()
  ShutdownGrpcServer(*server_, unary_calls_, deadline,
                     ended > 0 ? kLingerAfterEndedStreams : absl::ZeroDuration());
  if (loop_ != nullptr) {
    // The answers of what is still queued are operations on the loop's
    // queue: they are all out before the loop stops, and the bursts let go
    // of the manager first.
    bursts_->Stop();
    manager_->Sync();
    loop_->Stop();
  }
  server_.reset();
  node_.reset();
  service_.reset();
  manager_.reset();  // flushes the last batch
}

}  // namespace fencegate::lockservice
