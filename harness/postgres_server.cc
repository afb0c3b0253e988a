#include "harness/postgres_server.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "harness/free_port.h"
#include "harness/log_file.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"

namespace fencegate::testing {
namespace {

constexpr char kSuperuser[] = "fencegate";

// $FENCEGATE_PG_BINDIR, else the newest /usr/lib/postgresql/<version>/bin
// that holds a server.
absl::StatusOr<std::string> FindBinDir() {
  if (const char* dir = std::getenv("FENCEGATE_PG_BINDIR"); dir != nullptr && *dir) {
    return std::string(dir);
  }
  int best = -1;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
    int version = 0;
    if (absl::SimpleAtoi(entry.path().filename().string(), &version) && version > best &&
        std::filesystem::exists(entry.path() / "bin" / "postgres")) {
      best = version;
    }
  }
  if (best < 0) {
    return absl::FailedPreconditionError(
        "no PostgreSQL server binaries in /usr/lib/postgresql/<version>/bin: run "
        "./scripts/install-deps (Debian package postgresql), or set "
        "FENCEGATE_PG_BINDIR");
  }
  return absl::StrCat("/usr/lib/postgresql/", best, "/bin");
}

// Runs `argv` (as `run_as`: default this process's user) and waits for it;
// its stderr goes to `log`, quoted in the error if it fails.
absl::Status RunToEnd(std::vector<std::string> argv, const std::string& log,
                      RunAs run_as = {}) {
  ChildProcess::Options options;
  options.argv = std::move(argv);
  options.stderr_path = log;
  options.run_as = run_as;
  absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(options);
  if (!process.ok()) return process.status();
  absl::StatusOr<int> status = (*process)->Wait(absl::Seconds(120));
  if (!status.ok()) return status.status();
  if (!ExitedCleanly(*status)) {
    return absl::InternalError(
        absl::StrCat(options.argv[0], " failed: ", ReadWholeFile(log)));
  }
  return absl::OkStatus();
}

// Holds an exclusive flock(2) on a file for as long as it lives.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ < 0) {
      error_ = errno;
    } else if (flock(fd_, LOCK_EX) != 0) {
      error_ = errno;
      close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }
  int error() const { return error_; }  // errno of the failure, if not held

 private:
  int fd_;
  int error_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    std::vector<std::string> settings) {
  PostgresServerOptions options;
  options.settings = std::move(settings);
  return Start(std::move(options));
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    PostgresServerOptions options) {
  if (options.port == 0 && options.listen_address != "127.0.0.1") {
    return absl::InvalidArgumentError(
        "PostgresServerOptions: a port is required off 127.0.0.1 (free ports are "
        "picked on loopback only)");
  }
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->options_ = std::move(options);
  absl::StatusOr<std::string> bindir = FindBinDir();
  if (!bindir.ok()) return bindir.status();
  server->bindir_ = *bindir;
  if (geteuid() == 0) {
    const passwd* user = getpwnam("postgres");
    if (user == nullptr) {
      return absl::FailedPreconditionError(
          "PostgreSQL refuses to run as root, and there is no 'postgres' user to run it "
          "as: install Debian's postgresql package (./scripts/install-deps)");
    }
    server->run_as_ = RunAs{user->pw_uid, user->pw_gid};
    if (chown(server->dir_.path().c_str(), user->pw_uid, user->pw_gid) != 0) {
      return absl::InternalError("cannot hand " + server->dir_.path() + " to postgres");
    }
  }
  absl::Status status = server->InitDb();
  if (!status.ok()) return status;
  if (server->options_.port != 0) {
    status = server->Launch(server->options_.port);
    if (!status.ok()) return status;
    return server;
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::StatusOr<int> port = PickFreePort();
    if (!port.ok()) return port.status();
    status = server->Launch(*port);
    if (status.code() != absl::StatusCode::kAlreadyExists) break;  // else: port taken
  }
  if (!status.ok()) return status;
  return server;
}

absl::StatusOr<PostgresServer*> PostgresServer::Shared() {
  // Destroyed at exit, which stops the server and removes its files.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> server = Start();
  if (!server.ok()) return server.status();
  return server->get();
}

std::vector<std::string> PostgresServer::InitDbArgs() const {
  return {absl::StrCat("--username=", kSuperuser),
          "--auth=trust",
          "--encoding=UTF8",
          "--locale=C",
          "--locale-provider=icu",
          "--icu-locale=en-US",
          "--no-sync",
          "--no-instructions"};
}

absl::Status PostgresServer::RunInitDb() {
  std::vector<std::string> argv = {bindir_ + "/initdb", "--pgdata=" + dir_.File("data")};
  for (std::string& arg : InitDbArgs()) argv.push_back(std::move(arg));
  absl::Status status = RunToEnd(std::move(argv), dir_.File("initdb.log"), run_as_);
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      absl::StrCat(status.message(), "\n(as root, every parent of ", dir_.path(),
                   " must be searchable by the postgres user)"));
}

absl::Status PostgresServer::CopyTemplate(const std::string& templates) {
  // One template per initdb binary and argument list.
  struct stat initdb {};
  if (stat((bindir_ + "/initdb").c_str(), &initdb) != 0) {
    return absl::FailedPreconditionError(bindir_ + "/initdb: no such program");
  }
  const std::string key = absl::StrCat(
      "initdb-", std::hash<std::string>{}(absl::StrCat(
                     bindir_, "\n", initdb.st_size, "\n", initdb.st_mtim.tv_sec, "\n",
                     absl::StrJoin(InitDbArgs(), "\n"))));
  const std::string cluster = absl::StrCat(templates, "/", key);
  const std::string log = dir_.File("template.log");
  std::error_code error;
  std::filesystem::create_directories(templates, error);
  FileLock lock(cluster + ".lock");
  if (!lock.held()) {
    return absl::InternalError(
        absl::StrCat("cannot lock ", cluster,
                     ".lock (FENCEGATE_PG_TEMPLATES): ", strerror(lock.error())));
  }
  if (!std::filesystem::exists(cluster + "/PG_VERSION")) {
    // The first server of this key makes the template from its own fresh
    // cluster; it appears whole or not at all (rename).
    absl::Status made = RunInitDb();
    if (!made.ok()) return made;
    const std::string partial = cluster + ".partial";
    std::filesystem::remove_all(partial, error);
    absl::Status copied = RunToEnd({"/bin/cp", "-a", dir_.File("data"), partial}, log);
    if (!copied.ok()) return copied;
    if (rename(partial.c_str(), cluster.c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("cannot rename ", partial, ": ", strerror(errno)));
    }
    return absl::OkStatus();
  }
  // As root, cp -a keeps the postgres user as the files' owner.
  return RunToEnd({"/bin/cp", "-a", cluster, dir_.File("data")}, log);
}

absl::Status PostgresServer::InitDb() {
  const char* templates = std::getenv("FENCEGATE_PG_TEMPLATES");
  absl::Status status =
      templates != nullptr && *templates ? CopyTemplate(templates) : RunInitDb();
  if (!status.ok()) return status;
  if (options_.trusted_network.empty()) return absl::OkStatus();
  std::ofstream hba(dir_.File("data/pg_hba.conf"), std::ios::app);
  hba << "host all all " << options_.trusted_network << " trust\n";
  if (!hba) return absl::InternalError("cannot extend pg_hba.conf");
  return absl::OkStatus();
}

absl::Status PostgresServer::Launch(int port) {
  const std::string socket = absl::StrCat(dir_.path(), "/.s.PGSQL.", port);
  if (socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::FailedPreconditionError(
        "the temp dir's path is too long for a unix "
        "socket: set TMPDIR to a shorter one");
  }
  ServerProcessOptions options;
  const std::string& address = options_.listen_address;
  options.process.argv = {bindir_ + "/postgres",
                          "-D",
                          dir_.File("data"),
                          "-p",
                          absl::StrCat(port),
                          "-k",
                          dir_.path(),
                          "-c",
                          "listen_addresses=" + address,
                          "-c",
                          "shared_buffers=32MB",
                          "-c",
                          "max_connections=60"};
  for (const std::string& setting : options_.settings) {
    options.process.argv.push_back("-c");
    options.process.argv.push_back(setting);
  }
  options.process.run_as = run_as_;
  options.process.network_namespace = options_.network_namespace;
  options.process.death_signal = SIGINT;  // fast shutdown
  options.stop_signal = SIGINT;
  options.dir = dir_.path();
  options.name = "postgres";
  options.host = address;
  options.port = port;
  options.start_timeout = absl::Seconds(120);
  const std::string conninfo =
      absl::StrCat("host=", address, " port=", port, " user=", kSuperuser,
                   " dbname=postgres connect_timeout=5");
  options.readiness = Probe{[conninfo](const ServerProcess&) {
    return PQping(conninfo.c_str()) == PQPING_OK
               ? absl::OkStatus()
               : absl::UnavailableError("it does not accept connections yet");
  }};
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(std::move(options));
  if (!server.ok()) {
    const std::string log = LogTail();
    if (absl::StrContains(log, "could not bind") ||
        absl::StrContains(log, "already in use")) {
      return absl::AlreadyExistsError(absl::StrCat("port ", port, " was taken"));
    }
    return server.status();
  }
  server_ = *std::move(server);
  port_ = port;
  return absl::OkStatus();
}

PostgresServer::~PostgresServer() { Stop().IgnoreError(); }

std::string PostgresServer::Uri() const {
  return absl::StrCat("postgresql://", kSuperuser, "@", options_.listen_address, ":",
                      port_, "/postgres");
}

absl::StatusOr<std::string> PostgresServer::NewSchemaUri() {
  const std::string schema = absl::StrCat("fg_test_", schemas_.fetch_add(1));
  absl::Status status = Execute(Uri(), "CREATE SCHEMA " + schema);
  if (!status.ok()) return status;
  return absl::StrCat(Uri(), "?options=-csearch_path%3D", schema);
}

absl::Status PostgresServer::Execute(const std::string& uri, const std::string& sql) {
  try {
    pqxx::connection connection(uri);
    pqxx::nontransaction txn(connection);
    txn.exec(sql);
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("running SQL on ", uri, ": ", e.what()));
  }
}

absl::Status PostgresServer::Stop() {
  if (server_ == nullptr) return absl::OkStatus();
  // Fast shutdown: disconnects clients, checkpoints.
  absl::Status stopped = server_->Terminate(absl::Seconds(60));
  server_.reset();
  return stopped;
}

std::string PostgresServer::LogTail(size_t bytes) const {
  return FileTail(dir_.File("postgres.log"), bytes);
}

}  // namespace fencegate::testing
