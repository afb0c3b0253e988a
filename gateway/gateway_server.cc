#include "gateway/gateway_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/grpc/channel_credentials.h"
#include "common/server/grpc_shutdown.h"
#include "common/server/server_policy.h"
#include "common/server/server_setup.h"
#include "common/test_hooks/test_hooks.h"
#include "gateway/gateway_status_page.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_storage.h"
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
  server->lockservice_ = options.lockservice;
  server->observability_ = std::make_unique<ServerObservability>(
      options.serving, std::vector<std::string>{"fencegate.v1.Gateway"});
  absl::StatusOr<std::unique_ptr<authz::Authorizer>> authorizer =
      LoadServerPolicy(options.serving, *server->observability_);
  if (!authorizer.ok()) return authorizer.status();
  server->authorizer_ = *std::move(authorizer);
  if (options.storage.empty()) {
    absl::StatusOr<StateLock> state_lock =
        StateLock::Acquire(options.db_path, "fencegate-gateway");
    if (!state_lock.ok()) return state_lock.status();
    server->state_lock_.emplace(*std::move(state_lock));
  }
  absl::StatusOr<std::unique_ptr<StorageBackend>> storage =
      OpenStorage(options, &server->storage_description_);
  if (!storage.ok()) return storage.status();
  server->storage_ = *std::move(storage);
  if (!options.storage.empty()) {
    server->postgres_ = static_cast<PostgresStorage*>(server->storage_.get());
  }
  metrics::Registry* registry = server->observability_->registry();
  if (registry != nullptr) {
    server->refusals_ = std::make_unique<StaleRefusals>(*registry);
    server->store_metrics_ =
        StoreMetrics::Register(*registry, server->refusals_.get(),
                               /*count_raises=*/server->postgres_ == nullptr);
  }
  if (!options.serving.signing_keys_path.empty()) {
    server->signing_keys_path_ = options.serving.signing_keys_path;
    absl::StatusOr<KeyRing> keys = KeyRing::Load(options.serving.signing_keys_path);
    if (!keys.ok()) return keys.status();
    server->signer_ = std::make_unique<TokenSigner>(*std::move(keys));
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.serving.tls);
  if (!credentials.ok()) return credentials.status();
  server->store_ = std::make_unique<FencedStore>(
      server->storage_.get(), options.limits, server->signer_.get(),
      registry != nullptr ? &server->store_metrics_ : nullptr);
  if (!options.lockservice.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> lockservice_credentials =
        MakeChannelCredentials(options.lockservice_tls);
    if (!lockservice_credentials.ok()) return lockservice_credentials.status();
    FenceFollowerOptions follow;
    follow.lockservice = options.lockservice;
    follow.credentials = *lockservice_credentials;
    server->follower_ = std::make_unique<FenceFollower>(server->store_.get(), follow);
  }
  server->service_ = std::make_unique<GatewayServiceImpl>(
      server->store_.get(), options.session_limits, options.max_sessions,
      server->authorizer_.get());

  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  const CompletionQueueServing queue_serving{&server->health_, &cq};
  // The receive limit is large enough that an oversized value still arrives
  // and gets our INVALID_ARGUMENT naming the field and the limit.
  absl::StatusOr<std::unique_ptr<grpc::Server>> grpc_server = StartGrpcServer(
      options.serving.listen, server->service_->service(), &server->port_,
      options.serving.port_file, MaxReceiveMessageBytes(options.limits), *credentials,
      server->observability_.get(), &server->unary_calls_, &queue_serving);
  if (!grpc_server.ok()) return grpc_server.status();
  server->server_ = *std::move(grpc_server);
  // Every call and stream of the gateway is an event of this loop, which
  // commits what each burst of them queued (commit_bursts.h).
  FencedStore* store = server->store_.get();
  server->bursts_ = std::make_unique<CommitBursts>([store] { return store->Arriving(); });
#ifdef FENCEGATE_TEST_HOOKS
  // The torture commits chosen messages together (docs/torture.md).
  server->bursts_->HoldOpenWhile(
      [] { return FENCEGATE_FAILPOINT_HELD("gateway.burst_end"); });
#endif
  server->service_->Serve(cq.get());
  server->health_.Serve(cq.get());
  server->loop_ = std::make_unique<CompletionQueueLoop>(
      std::move(cq), server->bursts_.get(), "fg-gw-loop");
  if (registry != nullptr) {
    server->AddGauges(*registry);
    GatewayServer* raw = server.get();
    absl::Status listening = server->observability_->StartListener(
        [raw, registry](const HttpRequest& request) {
          return RenderGatewayStatusPage(request, *registry, *raw->refusals_,
                                         raw->follower_.get(), raw->lockservice_,
                                         raw->storage_description_,
                                         /*hide_resources=*/raw->authorizer_ != nullptr);
        });
    if (!listening.ok()) return listening;
  }
  return server;
}

void GatewayServer::AddGauges(metrics::Registry& registry) {
  using metrics::CollectedSample;
  using metrics::MetricType;
  FencedStore* store = store_.get();
  registry.AddCollected(
      "fencegate_gateway_pending", "Fenced requests queued for the next storage commit.",
      MetricType::kGauge, {}, [store](std::vector<CollectedSample>& out) {
        out.push_back({{}, static_cast<double>(store->pending())});
      });
  if (FenceFollower* follower = follower_.get()) {
    struct Feed {
      const char* name;
      const char* help;
      MetricType type;
      double (*value)(const FenceFollower::Stats&);
    };
    static const Feed kFeed[] = {
        {"fencegate_gateway_feed_caught_up",
         "1 while the grant-time feed from the lock service is live (caught up), else 0.",
         MetricType::kGauge,
         [](const FenceFollower::Stats& s) { return s.caught_up ? 1.0 : 0.0; }},
        {"fencegate_gateway_feed_applied_position",
         "The last fence position from the lock service whose fence is committed here.",
         MetricType::kGauge,
         [](const FenceFollower::Stats& s) {
           return static_cast<double>(s.applied_position);
         }},
        {"fencegate_gateway_feed_positions_behind",
         "Fence positions the lock service had announced and this gateway has not "
         "applied.",
         MetricType::kGauge,
         [](const FenceFollower::Stats& s) {
           return static_cast<double>(s.head_position - s.applied_position);
         }},
        {"fencegate_gateway_feed_seconds_since_event",
         "Seconds since the feed last brought fence events (grants or expiries).",
         MetricType::kGauge,
         [](const FenceFollower::Stats& s) {
           return absl::ToDoubleSeconds(s.since_last_event);
         }},
        {"fencegate_gateway_feed_reconnects_total",
         "Times the feed's stream ended and was reconnected.", MetricType::kCounter,
         [](const FenceFollower::Stats& s) {
           return static_cast<double>(s.streams_ended);
         }},
    };
    for (const Feed& f : kFeed) {
      auto value = f.value;
      registry.AddCollected(
          f.name, f.help, f.type, {},
          [follower, value](std::vector<CollectedSample>& out) {
            out.push_back({{}, value(follower->stats())});
          },
          /*owner=*/this);
    }
  }
  if (PostgresStorage* postgres = postgres_) {
    registry.AddCollected(
        "fencegate_gateway_postgres_read_connections",
        "PostgreSQL read connections (--read_connections), idle or busy.",
        MetricType::kGauge, {"state"}, [postgres](std::vector<CollectedSample>& out) {
          PostgresReaderPool::Stats s = postgres->reader_stats();
          out.push_back({{"idle"}, static_cast<double>(s.idle)});
          out.push_back({{"busy"}, static_cast<double>(s.size - s.idle)});
        });
    registry.AddCollected(
        "fencegate_gateway_postgres_read_waiters",
        "Reads waiting for a PostgreSQL read connection.", MetricType::kGauge, {},
        [postgres](std::vector<CollectedSample>& out) {
          out.push_back({{}, static_cast<double>(postgres->reader_stats().waiting)});
        });
  }
}

GatewayServer::~GatewayServer() { Shutdown(); }

std::string GatewayServer::DescribeSigning() const {
  return signer_ == nullptr ? "off" : signer_->keys()->Describe();
}

absl::Status GatewayServer::ReloadPolicy() {
  return ReloadServerPolicy(authorizer_.get());
}

std::string GatewayServer::DescribePolicy() const {
  return DescribeServerPolicy(authorizer_.get());
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
  // First: a scrape or page in flight ends while what it reads is alive,
  // and GetMetrics calls stop reading the follower, which goes next.
  observability_->StopListener();
  if (metrics::Registry* registry = observability_->registry()) {
    registry->RemoveCollected(this);
  }
  follower_.reset();  // before the store it raises fences in
  // Streams stop reading, answer what they read, and end; calls already
  // received still reach the store and wait for their commit.
  const absl::Time deadline = absl::Now() + shutdown_grace_;
  health_.Shutdown();
  const size_t ended = service_->CloseSessions(deadline);
  ShutdownGrpcServer(*server_, unary_calls_, deadline,
                     ended > 0 ? kLingerAfterEndedStreams : absl::ZeroDuration());
  // The store commits and answers what is still queued (calls past the
  // grace); their answers are operations on the loop's queue, so the loop
  // outlives the store, and its bursts let go of the store first.
  bursts_->Stop();
  store_.reset();
  loop_->Stop();
  server_.reset();
  storage_.reset();
}

}  // namespace fencegate::gateway
