// PostgresServer: a PostgreSQL server of the test's own, from Debian's
// binaries (/usr/lib/postgresql/<version>/bin, the newest installed, or
// $FENCEGATE_PG_BINDIR): initdb into a fresh temp dir, then `postgres` as a
// child process on a free 127.0.0.1 port with its unix socket in that temp
// dir. No system PostgreSQL service is used or needed. It runs as a
// ServerProcess (server_process.h), stopped by its PID (fast shutdown) when
// destroyed, and the temp dir removed.
//
// PostgreSQL refuses to run as root: when the test runs as root (CI),
// initdb and the server run as the `postgres` user that Debian's package
// creates, and the temp dir is handed to that user.
//
// The cluster's superuser is `fencegate` (trust authentication, loopback
// only); fsync and synchronous_commit keep their defaults (on), so what
// tests see of durability is real. Its default collation is ICU's en-US, a
// linguistic order ("a" < "B"), so a test sees it if code relies on the
// database's collation where it needs byte order.
//
// The server gets SIGINT (fast shutdown) if the test process dies
// (ChildProcess's death signal), so a test process that dies leaves no
// server behind.
//
// initdb takes about a second of CPU. With $FENCEGATE_PG_TEMPLATES set (ctest
// sets it for every gtest binary: tests/CMakeLists.txt), a server copies a
// cluster that initdb made once into that directory instead (one per initdb
// binary and argument list, made by the first server that needs it, under
// a file lock, and renamed into place whole). The copy is the same
// cluster: no server has run on it.
//
// By default it listens on 127.0.0.1. PostgresServerOptions can put it on
// a host of a VirtualNetwork instead (network_namespaces.h): it then runs
// in that host's namespace, listens on the host's address and given port,
// and trusts connections from `trusted_network` too. The caller reaches it
// from a thread in a namespace that routes there.
//
// Thread safety: Start(), Stop() and the destructor from one thread; the
// accessors and NewSchemaUri() / Execute() from any.
#ifndef FENCEGATE_HARNESS_POSTGRES_SERVER_H_
#define FENCEGATE_HARNESS_POSTGRES_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "harness/child_process.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {

struct PostgresServerOptions {
  // Extra "name=value" server settings (postgres -c).
  std::vector<std::string> settings;
  // Empty: this process's namespace. Else the namespace to run in (a name
  // `ip netns` made).
  std::string network_namespace;
  std::string listen_address = "127.0.0.1";
  int port = 0;  // 0: a free one (only on 127.0.0.1)
  // A CIDR network whose clients are trusted too (pg_hba.conf), e.g.
  // "10.77.0.0/24"; empty: loopback only.
  std::string trusted_network;
};

class PostgresServer {
 public:
  // initdb, then start the server. `settings` are extra "name=value" server
  // settings (postgres -c). Takes a few seconds on a loaded machine.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      std::vector<std::string> settings = {});
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(
      PostgresServerOptions options);
  // One server for the whole test process, started on first use (from the
  // main thread) and stopped at exit. Tests keep apart through schemas.
  static absl::StatusOr<PostgresServer*> Shared();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // -1 once stopped.
  pid_t pid() const { return server_ != nullptr ? server_->pid() : -1; }
  int port() const { return port_; }
  // postgresql://fencegate@<listen address>:<port>/postgres
  std::string Uri() const;
  // Creates a new, empty schema and returns a URI whose search_path is that
  // schema alone: a fresh namespace for one test's tables, much cheaper
  // than a database of its own.
  absl::StatusOr<std::string> NewSchemaUri();
  // Runs `sql` (one or more statements) on a connection to `uri`.
  static absl::Status Execute(const std::string& uri, const std::string& sql);

  // Fast shutdown (SIGINT), waiting for the exit. Idempotent.
  absl::Status Stop();
  // The last `bytes` of the server's log, for failure messages.
  std::string LogTail(size_t bytes = 4000) const;

 private:
  PostgresServer() = default;
  // The data dir: a copy of the template (FENCEGATE_PG_TEMPLATES) or
  // initdb's, then pg_hba.conf's trusted network.
  absl::Status InitDb();
  std::vector<std::string> InitDbArgs() const;  // but --pgdata
  absl::Status RunInitDb();
  absl::Status CopyTemplate(const std::string& templates);
  // Starts postgres on `port`; OK once it answers.
  absl::Status Launch(int port);

  TempDir dir_;
  std::string bindir_;
  RunAs run_as_;  // whom initdb and postgres run as
  PostgresServerOptions options_;
  std::unique_ptr<ServerProcess> server_;
  int port_ = 0;
  std::atomic<int> schemas_{0};
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_POSTGRES_SERVER_H_
