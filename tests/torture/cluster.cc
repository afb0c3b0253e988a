#include "tests/torture/cluster.h"

#include <sys/stat.h>

#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {
namespace {

// As much of PostgreSQL's log as a run directory keeps.
constexpr size_t kPostgresLogBytes = 1 << 20;

// A key file with one fresh 32-byte signing key (docs/security.md).
absl::Status WriteSigningKeys(const std::string& path) {
  std::random_device random;
  std::string secret;
  for (int i = 0; i < 32; ++i) absl::StrAppendFormat(&secret, "%02x", random() & 0xff);
  {
    std::ofstream out(path, std::ios::trunc);
    out << "torture " << secret << " sign\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  chmod(path.c_str(), 0600);
  return absl::OkStatus();
}

}  // namespace

Cluster::Cluster(const Schedule& schedule, ClusterOptions options)
    : schedule_(schedule), options_(std::move(options)) {}

Cluster::~Cluster() {
  // A run that ended early: keep what PostgreSQL said (it stops with its
  // members, after the gateways).
  if (postgres_ != nullptr) SavePostgresLog();
}

absl::Status Cluster::Start() {
  const Topology& topology = schedule_.profile.topology;
  const std::string& bug = schedule_.profile.planted_bug;
  const std::string keys = options_.run_dir + "/signing-keys.txt";
  const std::string& dir = options_.run_dir;
  ServerNodeOptions lock{"lockservice", options_.lockservice_binary, dir,
                         {absl::StrCat("--db=", dir, "/lockservice.db"),
                          absl::StrCat("--lease_history_file=", dir, "/lockservice.history"),
                          "--shutdown_grace=2s"},
                         options_.faketime_library};
  std::vector<std::string> gateway_args = {"--shutdown_grace=2s"};
  // Each planted bug lives in one kind of server; its name says which.
  if (absl::StartsWith(bug, "lock_")) lock.extra_args.push_back("--planted_bug=" + bug);
  if (absl::StartsWith(bug, "gateway_")) gateway_args.push_back("--planted_bug=" + bug);
  if (schedule_.secure) {
    absl::Status written = WriteSigningKeys(keys);
    if (!written.ok()) return written;
    lock.extra_args.push_back("--signing_keys=" + keys);
    gateway_args.push_back("--signing_keys=" + keys);
  }
  if (topology.storage == GatewayStorage::kPostgres) {
    absl::StatusOr<std::unique_ptr<testing::PostgresServer>> postgres =
        testing::PostgresServer::Start();
    if (!postgres.ok()) return postgres.status();
    postgres_ = *std::move(postgres);
    gateway_args.push_back("--storage=" + postgres_->Uri());
  }
  lockservice_ = std::make_unique<ServerNode>(lock);
  absl::Status started = lockservice_->Start();
  if (!started.ok()) return started;
  if (schedule_.secure) gateway_args.push_back("--lockservice=" + lockservice_->address());
  for (int i = 0; i < topology.gateways; ++i) {
    ServerNodeOptions gateway{GatewayName(topology, i), options_.gateway_binary, dir,
                              gateway_args, options_.faketime_library};
    if (topology.storage == GatewayStorage::kSqlite) {
      gateway.extra_args.push_back(absl::StrCat("--db=", dir, "/", gateway.name, ".db"));
    }
    gateways_.push_back(std::make_unique<ServerNode>(gateway));
    started = gateways_.back()->Start();
    if (!started.ok()) return started;
  }
  return absl::OkStatus();
}

std::vector<ServerNode*> Cluster::gateways() const {
  std::vector<ServerNode*> gateways;
  for (const auto& gateway : gateways_) gateways.push_back(gateway.get());
  return gateways;
}

std::vector<ServerNode*> Cluster::servers() const {
  std::vector<ServerNode*> servers = gateways();
  servers.insert(servers.begin(), lockservice_.get());
  return servers;
}

void Cluster::Heal(std::vector<std::string>* errors) {
  for (ServerNode* server : servers()) {
    std::string exit = server->UnexpectedExit();
    if (!exit.empty()) {
      errors->push_back(absl::StrCat("the ", server->name(), " exited by itself: ", exit));
    }
    server->Disarm();
    server->SetClockOffset(absl::ZeroDuration());
    server->Continue();
    absl::Status started = server->Start();
    if (!started.ok()) errors->push_back(started.ToString());
  }
}

void Cluster::KillAll() {
  for (ServerNode* server : servers()) server->Kill();
}

void Cluster::Stop(std::vector<std::string>* errors) {
  for (ServerNode* server : servers()) {
    absl::Status stopped = server->Terminate();
    if (!stopped.ok()) errors->push_back(stopped.ToString());
  }
  if (postgres_ == nullptr) return;
  absl::Status stopped = postgres_->Stop();
  if (!stopped.ok()) errors->push_back(absl::StrCat("PostgreSQL: ", stopped.ToString()));
  SavePostgresLog();
  postgres_.reset();
}

void Cluster::SavePostgresLog() {
  std::ofstream(options_.run_dir + "/postgres.log") << postgres_->LogTail(kPostgresLogBytes);
}

}  // namespace fencegate::torture
