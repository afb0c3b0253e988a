// Cluster: the servers of one torture run, as ServerNodes, for the
// schedule's topology (schedule.h, Topology):
//
//   sqlite                 the test build of the lock service (SQLite) and one
//                          gateway on a SQLite file in the run directory;
//   postgres-two-gateways  the lock service, and two gateways on one
//                          PostgreSQL database of the run's own
//                          (PostgresServer, never faulted);
//   etcd-cluster           three etcd members (EtcdCluster: Debian's etcd,
//                          a data dir each, fsync on), three lock-service
//                          instances on them (--store=etcd://, one leads, the
//                          others forward) and two gateways on one
//                          PostgreSQL; every one on a host of its own in the
//                          run's VirtualNetwork (NetworkHostNames()), so
//                          links can be cut (cuts()).
//
// With SQL workers (ScheduleProfile::sql_workers) the cluster installs the
// SQL fencing API into the gateways' database and schema before any gateway
// starts (gateway::InstallSqlApi), and on a secure schedule loads the run's
// signing keys into it (gateway::LoadSqlKeys), so fencegate_fence verifies
// the same signatures the gateways do.
//
// Every lock-service instance writes its lease history
// (lockservice[-<i>].history). The schedule's planted bug goes to the
// server(s) it belongs to; on a secure schedule every server gets signed
// tokens (a fresh key file in the run directory) and every gateway
// grant-time fencing (--lockservice, every instance).
//
// PostgreSQL and etcd are started from the thread that calls Start() and
// die with it (ChildProcess): call Start() from the thread that runs the
// schedule. On a networked topology that thread must be in the network's
// harness host (kHarnessHost), as every thread that talks to the servers.
//
// Thread safety: Start(), Heal(), KillAll() and Stop() from one thread; the
// nodes, the queries and cuts() are thread-safe.
#ifndef FENCEGATE_TESTS_TORTURE_CLUSTER_H_
#define FENCEGATE_TESTS_TORTURE_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/etcd_cluster.h"
#include "harness/network_namespaces.h"
#include "harness/postgres_server.h"
#include "tests/torture/network_cuts.h"
#include "tests/torture/schedule.h"
#include "tests/torture/server_node.h"

namespace fencegate::torture {

// The hosts of a networked topology's VirtualNetwork.
inline constexpr char kHarnessHost[] = "harness";
inline constexpr char kPostgresHost[] = "pg";
std::string EtcdHost(int i);         // "etcd-<i>"
std::string LockServiceHost(int i);  // "ls-<i>"
std::string GatewayHost(int i);      // "gw-<i>"
std::string WorkerHost(int i);       // "w<i>"
// Every host a topology needs for `workers` workers, the harness's first.
std::vector<std::string> NetworkHostNames(const Topology& topology, int workers);

struct ClusterOptions {
  std::string lockservice_binary;
  std::string gateway_binary;
  std::string faketime_library;
  std::string run_dir;
  // Required by a replicated topology (Topology::replicated()); ignored
  // otherwise. Outlives the cluster.
  testing::VirtualNetwork* network = nullptr;
};

class Cluster {
 public:
  Cluster(const Schedule& schedule, ClusterOptions options);
  // Kills what still runs; keeps PostgreSQL's log in the run directory;
  // heals every cut.
  ~Cluster();

  // Starts PostgreSQL if the topology has it, etcd if it has that, the lock
  // service's instances (waiting until one leads), then the gateways
  // (which may follow the lock service).
  absl::Status Start();
  // Undoes whatever faults left behind: every cut healed, every server
  // running, continued, with no failpoint armed and its wall clock back on
  // real time. Problems, and a server that exited by itself since it was
  // last checked, are appended to `errors`.
  void Heal(std::vector<std::string>* errors);
  // kill -9 of every server, etcd members included (PostgreSQL aside);
  // Heal() restarts them.
  void KillAll();
  // SIGTERM to every server, which must exit cleanly; then PostgreSQL's
  // fast shutdown, its log kept in the run directory (postgres.log). etcd
  // members are killed (their data stays). Problems are appended to
  // `errors`.
  void Stop(std::vector<std::string>* errors);

  // Lock-service instance i (0 on the single-instance topologies).
  ServerNode& lockservice(int i = 0) { return *lockservices_[i]; }
  std::vector<ServerNode*> lockservices() const;
  // What a client of the lock service dials: its address, or with several
  // instances "ipv4:a,b,c" starting at instance `first` (pick_first goes
  // on to the next one when it is gone).
  std::string lockservice_target(int first = 0) const;
  // Gateway i of the topology; worker i talks to gateway(i % gateways).
  ServerNode& gateway(int index) { return *gateways_[index]; }
  std::vector<ServerNode*> gateways() const;
  // The gateways' database (libpq URI), what SQL workers connect to;
  // "" without PostgreSQL.
  std::string postgres_uri() const;

  // Replicated topologies only (null / -1 / errors otherwise):
  testing::EtcdCluster* etcd() { return etcd_.get(); }
  NetworkCuts* cuts() { return cuts_.get(); }
  // The instance the leader key in etcd names, once one does (polls until
  // `timeout`).
  absl::StatusOr<int> LockServiceLeader(absl::Duration timeout);
  // The instance the leader key names now; -1 if none.
  int LockServiceLeaderNow();

 private:
  std::vector<ServerNode*> servers() const;  // instances, then gateways
  absl::Status StartEtcd();
  // The SQL fencing API in the gateways' schema, and the keys if signed.
  absl::Status InstallSqlApi(const std::string& keys);
  void HealEtcd(std::vector<std::string>* errors);
  void SavePostgresLog();

  const Schedule& schedule_;
  const ClusterOptions options_;
  std::unique_ptr<testing::PostgresServer> postgres_;
  std::unique_ptr<testing::EtcdCluster> etcd_;
  std::unique_ptr<NetworkCuts> cuts_;
  std::vector<std::unique_ptr<ServerNode>> lockservices_;
  std::vector<std::unique_ptr<ServerNode>> gateways_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_CLUSTER_H_
