#include "tests/torture/cluster.h"

#include <sys/stat.h>

#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/signing/signing_keys.h"
#include "gateway/postgres/postgres_sql_api.h"
#include "pqxx/connection"

namespace fencegate::torture {
namespace {

// As much of PostgreSQL's log as a run directory keeps.
constexpr size_t kPostgresLogBytes = 1 << 20;
// The ports on a networked topology's hosts (each host has its own).
constexpr int kLockServicePort = 7070;
constexpr int kGatewayPort = 7080;
constexpr int kPostgresPort = 5432;
// The lock service's leader key (the default --etcd_prefix).
constexpr char kLeaderKey[] = "/fencegate/lockservice/leader";

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

std::string EtcdHost(int i) { return absl::StrCat("etcd-", i); }
std::string LockServiceHost(int i) { return absl::StrCat("ls-", i); }
std::string GatewayHost(int i) { return absl::StrCat("gw-", i); }
std::string WorkerHost(int i) { return absl::StrCat("w", i); }

std::vector<std::string> NetworkHostNames(const Topology& topology, int workers) {
  std::vector<std::string> hosts = {kHarnessHost, kPostgresHost};
  for (int i = 0; i < topology.etcd_members; ++i) hosts.push_back(EtcdHost(i));
  for (int i = 0; i < topology.lockservices; ++i) hosts.push_back(LockServiceHost(i));
  for (int i = 0; i < topology.gateways; ++i) hosts.push_back(GatewayHost(i));
  for (int i = 0; i < workers; ++i) hosts.push_back(WorkerHost(i));
  return hosts;
}

Cluster::Cluster(const Schedule& schedule, ClusterOptions options)
    : schedule_(schedule), options_(std::move(options)) {
  if (options_.network != nullptr && schedule_.profile.topology.replicated()) {
    cuts_ = std::make_unique<NetworkCuts>(options_.network);
  }
}

Cluster::~Cluster() {
  // A run that ended early: keep what PostgreSQL said (it stops with its
  // members, after the gateways).
  if (postgres_ != nullptr) SavePostgresLog();
  if (cuts_ != nullptr) cuts_->HealAll().IgnoreError();
}

absl::Status Cluster::StartEtcd() {
  const Topology& topology = schedule_.profile.topology;
  testing::EtcdClusterOptions etcd;
  etcd.members = topology.etcd_members;
  for (int i = 0; i < topology.etcd_members; ++i) {
    const testing::NetworkHost& host = options_.network->host(EtcdHost(i));
    etcd.hosts.push_back({host.netns, host.address});
  }
  absl::StatusOr<std::unique_ptr<testing::EtcdCluster>> started =
      testing::EtcdCluster::Start(options_.run_dir, etcd);
  if (!started.ok()) return started.status();
  etcd_ = *std::move(started);
  return absl::OkStatus();
}

absl::Status Cluster::InstallSqlApi(const std::string& keys) {
  try {
    pqxx::connection connection(postgres_->Uri());
    absl::Status installed = gateway::InstallSqlApi(connection);
    if (!installed.ok() || !schedule_.secure) return installed;
    absl::StatusOr<KeyRing> ring = KeyRing::Load(keys);
    if (!ring.ok()) return ring.status();
    return gateway::LoadSqlKeys(connection, *ring);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("installing the SQL fencing API: cannot connect: ", e.what()));
  }
}

std::string Cluster::postgres_uri() const {
  return postgres_ == nullptr ? "" : postgres_->Uri();
}

absl::Status Cluster::Start() {
  const Topology& topology = schedule_.profile.topology;
  const std::string& bug = schedule_.profile.planted_bug;
  const std::string keys = options_.run_dir + "/signing-keys.txt";
  const std::string& dir = options_.run_dir;
  testing::VirtualNetwork* network = topology.replicated() ? options_.network : nullptr;
  if (topology.replicated() && network == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("topology ", topology.name, " needs a network of its own"));
  }
  std::vector<std::string> lock_args = {"--shutdown_grace=2s"};
  std::vector<std::string> gateway_args = {"--shutdown_grace=2s"};
  // Each planted bug lives in one kind of server; its name says which.
  // A disk_ bug is in both servers (planted_disk_bug.cc).
  const bool both = absl::StartsWith(bug, "disk_");
  if (both || absl::StartsWith(bug, "lock_")) lock_args.push_back("--planted_bug=" + bug);
  if (both || absl::StartsWith(bug, "gateway_"))
    gateway_args.push_back("--planted_bug=" + bug);
  if (schedule_.secure) {
    absl::Status written = WriteSigningKeys(keys);
    if (!written.ok()) return written;
    lock_args.push_back("--signing_keys=" + keys);
    gateway_args.push_back("--signing_keys=" + keys);
  }
  if (topology.storage == GatewayStorage::kPostgres) {
    testing::PostgresServerOptions pg;
    if (network != nullptr) {
      const testing::NetworkHost& host = network->host(kPostgresHost);
      pg.network_namespace = host.netns;
      pg.listen_address = host.address;
      pg.port = kPostgresPort;
      pg.trusted_network = host.address.substr(0, host.address.rfind('.')) + ".0/24";
    }
    absl::StatusOr<std::unique_ptr<testing::PostgresServer>> postgres =
        testing::PostgresServer::Start(pg);
    if (!postgres.ok()) return postgres.status();
    postgres_ = *std::move(postgres);
    gateway_args.push_back("--storage=" + postgres_->Uri());
    if (schedule_.profile.sql_workers > 0) {
      absl::Status installed = InstallSqlApi(keys);
      if (!installed.ok()) return installed;
    }
  }
  if (topology.replicated()) {
    absl::Status started = StartEtcd();
    if (!started.ok()) return started;
    lock_args.push_back("--store=" + etcd_->url());
    lock_args.push_back(absl::StrCat("--etcd_session_ttl=",
                                     absl::FormatDuration(topology.etcd_session_ttl)));
  }
  for (int i = 0; i < topology.lockservices; ++i) {
    const std::string name = LockServiceName(topology, i);
    ServerNodeOptions lock;
    lock.name = name;
    lock.binary = options_.lockservice_binary;
    lock.run_dir = dir;
    lock.extra_args = lock_args;
    lock.faketime_library = options_.faketime_library;
    lock.extra_args.push_back(
        absl::StrCat("--lease_history_file=", dir, "/", name, ".history"));
    if (!topology.replicated()) {
      lock.extra_args.push_back(absl::StrCat("--db=", dir, "/lockservice.db"));
      if (schedule_.profile.disk_faults) lock.disk_database = dir + "/lockservice.db";
    } else {
      const testing::NetworkHost& host = network->host(LockServiceHost(i));
      lock.network_namespace = host.netns;
      lock.host = host.address;
      lock.port = kLockServicePort;
    }
    lockservices_.push_back(std::make_unique<ServerNode>(lock));
    absl::Status started = lockservices_.back()->Start();
    if (!started.ok()) return started;
  }
  if (topology.replicated()) {
    absl::StatusOr<int> leader = LockServiceLeader(absl::Seconds(60));
    if (!leader.ok()) return leader.status();
  }
  if (schedule_.secure) gateway_args.push_back("--lockservice=" + lockservice_target());
  for (int i = 0; i < topology.gateways; ++i) {
    ServerNodeOptions gateway;
    gateway.name = GatewayName(topology, i);
    gateway.binary = options_.gateway_binary;
    gateway.run_dir = dir;
    gateway.extra_args = gateway_args;
    gateway.faketime_library = options_.faketime_library;
    if (topology.storage == GatewayStorage::kSqlite) {
      gateway.extra_args.push_back(absl::StrCat("--db=", dir, "/", gateway.name, ".db"));
      if (schedule_.profile.disk_faults)
        gateway.disk_database = absl::StrCat(dir, "/", gateway.name, ".db");
    }
    if (network != nullptr) {
      const testing::NetworkHost& host = network->host(GatewayHost(i));
      gateway.network_namespace = host.netns;
      gateway.host = host.address;
      gateway.port = kGatewayPort;
    }
    gateways_.push_back(std::make_unique<ServerNode>(gateway));
    absl::Status started = gateways_.back()->Start();
    if (!started.ok()) return started;
  }
  return absl::OkStatus();
}

std::vector<ServerNode*> Cluster::lockservices() const {
  std::vector<ServerNode*> nodes;
  for (const auto& node : lockservices_) nodes.push_back(node.get());
  return nodes;
}

std::string Cluster::lockservice_target(int first) const {
  if (lockservices_.size() == 1) return lockservices_[0]->address();
  std::vector<std::string> addresses;
  for (size_t i = 0; i < lockservices_.size(); ++i) {
    addresses.push_back(lockservices_[(first + i) % lockservices_.size()]->address());
  }
  return absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
}

std::vector<ServerNode*> Cluster::gateways() const {
  std::vector<ServerNode*> gateways;
  for (const auto& gateway : gateways_) gateways.push_back(gateway.get());
  return gateways;
}

std::vector<ServerNode*> Cluster::servers() const {
  std::vector<ServerNode*> servers = lockservices();
  for (ServerNode* gateway : gateways()) servers.push_back(gateway);
  return servers;
}

int Cluster::LockServiceLeaderNow() {
  if (etcd_ == nullptr) return -1;
  etcdserverpb::RangeRequest range;
  range.set_key(kLeaderKey);
  absl::StatusOr<etcdserverpb::RangeResponse> answer =
      etcd_->client().Range(range, absl::Now() + absl::Seconds(2));
  if (!answer.ok() || answer->kvs().empty()) return -1;
  for (size_t i = 0; i < lockservices_.size(); ++i) {
    if (lockservices_[i]->address() == answer->kvs(0).value()) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<int> Cluster::LockServiceLeader(absl::Duration timeout) {
  if (etcd_ == nullptr) return 0;
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    const int leader = LockServiceLeaderNow();
    if (leader >= 0) return leader;
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no lock-service instance led within ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(50));  // poll interval, under a deadline
  }
}

void Cluster::HealEtcd(std::vector<std::string>* errors) {
  std::vector<int> down;
  for (int i = 0; i < etcd_->size(); ++i) {
    std::string exit = etcd_->UnexpectedExit(i);
    if (!exit.empty()) errors->push_back(absl::StrCat("etcd exited by itself: ", exit));
    if (etcd_->running(i)) {
      etcd_->Resume(i).IgnoreError();
    } else {
      down.push_back(i);
    }
  }
  if (down.empty()) return;
  absl::Status restarted = etcd_->RestartMembers(down);
  if (!restarted.ok())
    errors->push_back(absl::StrCat("restarting etcd: ", restarted.ToString()));
}

void Cluster::Heal(std::vector<std::string>* errors) {
  if (cuts_ != nullptr) {
    absl::Status healed = cuts_->HealAll();
    if (!healed.ok())
      errors->push_back(absl::StrCat("healing the network: ", healed.ToString()));
  }
  if (etcd_ != nullptr) HealEtcd(errors);
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
  if (etcd_ == nullptr) return;
  for (int i = 0; i < etcd_->size(); ++i) {
    if (etcd_->running(i)) etcd_->Kill(i).IgnoreError();
  }
}

void Cluster::Stop(std::vector<std::string>* errors) {
  for (ServerNode* server : servers()) {
    absl::Status stopped = server->Terminate();
    if (!stopped.ok()) errors->push_back(stopped.ToString());
  }
  etcd_.reset();  // kills the members; the data stays in the run directory
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
