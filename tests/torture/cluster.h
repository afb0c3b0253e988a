// Cluster: the servers of one torture run, as ServerNodes: the test build of
// the lock service (with its lease history) and the topology's gateways
// (schedule.h, Topology): one gateway on a SQLite file in the run directory,
// or several on one PostgreSQL database of the run's own (PostgresServer,
// its own temp dir, never faulted). The schedule's planted bug goes to the
// server(s) it belongs to; on a secure schedule every server gets signed
// tokens (a fresh key file in the run directory) and every gateway
// grant-time fencing (--lockservice).
//
// PostgreSQL is started from the thread that calls Start() and dies with it
// (PostgresServer): call Start() from the thread that runs the schedule.
//
// Thread safety: Start(), Heal(), KillAll() and Stop() from one thread; the
// nodes themselves are thread-safe.
#ifndef FENCEGATE_TESTS_TORTURE_CLUSTER_H_
#define FENCEGATE_TESTS_TORTURE_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/testing/postgres_server.h"
#include "tests/torture/schedule.h"
#include "tests/torture/server_node.h"

namespace fencegate::torture {

struct ClusterOptions {
  std::string lockservice_binary;
  std::string gateway_binary;
  std::string faketime_library;
  std::string run_dir;
};

class Cluster {
 public:
  Cluster(const Schedule& schedule, ClusterOptions options);
  // Kills what still runs; keeps PostgreSQL's log in the run directory.
  ~Cluster();

  // Starts PostgreSQL if the topology has it, the lock service, then the
  // gateways (which may follow the lock service).
  absl::Status Start();
  // Undoes whatever faults left behind: every server running, continued,
  // with no failpoint armed and its wall clock back on real time. Problems,
  // and a server that exited by itself since it was last checked, are
  // appended to `errors`.
  void Heal(std::vector<std::string>* errors);
  // kill -9 of every server (PostgreSQL aside); Heal() restarts them.
  void KillAll();
  // SIGTERM to every server, which must exit cleanly; then PostgreSQL's
  // fast shutdown, its log kept in the run directory (postgres.log).
  // Problems are appended to `errors`.
  void Stop(std::vector<std::string>* errors);

  ServerNode& lockservice() { return *lockservice_; }
  // Gateway i of the topology; worker i talks to gateway(i % gateways).
  ServerNode& gateway(int index) { return *gateways_[index]; }
  std::vector<ServerNode*> gateways() const;

 private:
  std::vector<ServerNode*> servers() const;  // the lock service, then the gateways
  void SavePostgresLog();

  const Schedule& schedule_;
  const ClusterOptions options_;
  std::unique_ptr<testing::PostgresServer> postgres_;
  std::unique_ptr<ServerNode> lockservice_;
  std::vector<std::unique_ptr<ServerNode>> gateways_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_CLUSTER_H_
