#include "tests/testing/postgres_server.h"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"

namespace fencegate::testing {
namespace {

constexpr char kSuperuser[] = "fencegate";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
    if (absl::SimpleAtoi(entry.path().filename().string(), &version) &&
        version > best && std::filesystem::exists(entry.path() / "bin" / "postgres")) {
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

// A TCP port on 127.0.0.1 that was free a moment ago (postgres cannot bind
// port 0 and tell us which it got; Launch() retries if another process
// takes it first).
absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) return absl::InternalError("could not find a free port on 127.0.0.1");
  return ntohs(address.sin_port);
}

// Runs `argv` (argv[0] a full path) as uid/gid (0: as the caller) with
// stdout and stderr appended to `log`. The child gets `death_signal` when
// the calling thread exits.
absl::StatusOr<pid_t> Spawn(std::vector<std::string> argv, const std::string& log,
                            uid_t uid, gid_t gid, int death_signal) {
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) return absl::InternalError("cannot open " + log);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child of a threaded process: async-signal-safe calls only.
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    if (uid != 0 && (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) {
      _exit(126);
    }
    // After setuid, which clears it.
    prctl(PR_SET_PDEATHSIG, death_signal);
    if (getppid() != parent) _exit(125);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  close(null_fd);
  if (pid < 0) return absl::InternalError(absl::StrCat("cannot fork to run ", argv[0]));
  return pid;
}

// Waits up to `deadline` for `pid` to exit; its wait status, or -1.
int WaitForExit(pid_t pid, absl::Duration deadline) {
  const absl::Time give_up = absl::Now() + deadline;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (absl::Now() > give_up) return -1;
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  return status;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    std::vector<std::string> settings) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->settings_ = std::move(settings);
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
    server->uid_ = user->pw_uid;
    server->gid_ = user->pw_gid;
    if (chown(server->dir_.path().c_str(), server->uid_, server->gid_) != 0) {
      return absl::InternalError("cannot hand " + server->dir_.path() + " to postgres");
    }
  }
  absl::Status status = server->InitDb();
  if (!status.ok()) return status;
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::StatusOr<int> port = FreePort();
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

absl::Status PostgresServer::InitDb() {
  const std::string log = dir_.File("initdb.log");
  absl::StatusOr<pid_t> pid =
      Spawn({bindir_ + "/initdb", "--pgdata=" + dir_.File("data"),
             absl::StrCat("--username=", kSuperuser), "--auth=trust", "--encoding=UTF8",
             "--locale=C", "--locale-provider=icu", "--icu-locale=en-US", "--no-sync",
             "--no-instructions"},
            log, uid_, gid_, SIGKILL);
  if (!pid.ok()) return pid.status();
  const int status = WaitForExit(*pid, absl::Seconds(120));
  if (status == -1) {
    kill(*pid, SIGKILL);
    waitpid(*pid, nullptr, 0);
  }
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(
        "initdb failed (as root, every parent of ", dir_.path(),
        " must be searchable by the postgres user):\n", ReadFile(log)));
  }
  return absl::OkStatus();
}

absl::Status PostgresServer::Launch(int port) {
  const std::string socket = absl::StrCat(dir_.path(), "/.s.PGSQL.", port);
  if (socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::FailedPreconditionError("the temp dir's path is too long for a unix "
                                         "socket: set TMPDIR to a shorter one");
  }
  std::vector<std::string> argv = {bindir_ + "/postgres", "-D", dir_.File("data"), "-p",
                                   absl::StrCat(port), "-k", dir_.path(), "-c",
                                   "listen_addresses=127.0.0.1", "-c", "shared_buffers=32MB",
                                   "-c", "max_connections=60"};
  for (const std::string& setting : settings_) {
    argv.push_back("-c");
    argv.push_back(setting);
  }
  absl::StatusOr<pid_t> pid = Spawn(argv, dir_.File("postgres.log"), uid_, gid_, SIGINT);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  port_ = port;
  const std::string conninfo =
      absl::StrCat("host=127.0.0.1 port=", port, " user=", kSuperuser,
                   " dbname=postgres connect_timeout=5");
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (absl::Now() < give_up) {
    if (PQping(conninfo.c_str()) == PQPING_OK) return absl::OkStatus();
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      const std::string log = LogTail();
      if (absl::StrContains(log, "could not bind") ||
          absl::StrContains(log, "already in use")) {
        return absl::AlreadyExistsError(absl::StrCat("port ", port, " was taken"));
      }
      return absl::InternalError("postgres exited during start-up:\n" + log);
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  Stop().IgnoreError();
  return absl::DeadlineExceededError("postgres did not accept connections within 120 s:\n" +
                                     LogTail());
}

PostgresServer::~PostgresServer() { Stop().IgnoreError(); }

std::string PostgresServer::Uri() const {
  return absl::StrCat("postgresql://", kSuperuser, "@127.0.0.1:", port_, "/postgres");
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
  if (pid_ <= 0) return absl::OkStatus();
  kill(pid_, SIGINT);  // fast shutdown: disconnects clients, checkpoints
  int status = WaitForExit(pid_, absl::Seconds(60));
  if (status == -1) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return absl::DeadlineExceededError("postgres ignored SIGINT for 60 s; killed it");
  }
  pid_ = -1;
  return absl::OkStatus();
}

std::string PostgresServer::LogTail(size_t bytes) const {
  std::string log = ReadFile(dir_.File("postgres.log"));
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace fencegate::testing
