// ServerProcess: a server run as a child process (ChildProcess) and awaited
// until it serves, for the tests, the demo and the torture suite. How it
// says so is its Readiness:
//   - PortFile: fencegate's own servers. Start() adds
//     --listen=<host>:<port> (port 0: any free one) and
//     --port_file=<dir>/<name>.port to its arguments and waits until that
//     file names the port (the given one, if one was given). It also adds
//     --metrics_port_file=<dir>/<name>.metrics_port, and
//     --metrics_listen=<host>:0 unless the arguments name one, so servers
//     started side by side never share a metrics port (MetricsPort()).
//   - Probe: any other server (etcd, PostgreSQL): its arguments as given;
//     `ready` is polled until it answers OK.
// Its stderr and stdout are appended to <dir>/<name>.log, across restarts
// under the same name; LogSinceStart() is what this start wrote.
// Start() fails with the log's tail: INTERNAL if the process exits first,
// DEADLINE_EXCEEDED (and the process is killed) if it is not ready within
// start_timeout; NOT_FOUND if there is no executable.
//
// Every wait polls under a deadline. Only the process this object started
// is signalled, by its PID; the destructor SIGKILLs it if it still runs.
//
// Thread safety: thread-safe after Start() (ChildProcess is); Start() and
// AwaitReady() from one thread.
#ifndef FENCEGATE_HARNESS_SERVER_PROCESS_H_
#define FENCEGATE_HARNESS_SERVER_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "harness/child_process.h"

namespace fencegate::testing {

class ServerProcess;

// fencegate's servers: --listen and --port_file are added (see above).
struct PortFile {};
// Other servers: `ready` is polled (every 20 ms) until it returns OK; its
// last error goes into the timeout's message.
struct Probe {
  std::function<absl::Status(const ServerProcess&)> ready;
};
using Readiness = std::variant<PortFile, Probe>;

struct ServerProcessOptions {
  // argv[0]: the binary. stderr_path and pipes are set by ServerProcess.
  ChildProcess::Options process;
  std::string dir;   // its log (and port file) go here
  std::string name;  // <name>.log, <name>.port
  Readiness readiness = PortFile{};
  // PortFile: where it listens; port 0 lets it pick one. Probe: where the
  // caller told it to listen (address() says it).
  std::string host = "127.0.0.1";
  int port = 0;
  // Terminate() sends it (PostgreSQL's fast shutdown is SIGINT).
  int stop_signal = SIGTERM;
  absl::Duration start_timeout = absl::Seconds(30);
  // Polled while waiting; a non-OK status ends the wait with it (the
  // demo's Ctrl-C).
  std::function<absl::Status()> check_cancelled;
};

class ServerProcess {
 public:
  // Launch() and AwaitReady().
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      ServerProcessOptions options);
  // How many ports the common case below draws before it gives up.
  static constexpr int kPortPicks = 5;
  // A fencegate server `binary` with `args`, on 127.0.0.1:<port>, its files
  // <work_dir>/<name>.*: the common case. Port 0: one PickFreePort() draws
  // below the kernel's ephemeral range (picked again if taken before the
  // server binds it), so the server can be restarted on port() safely.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::string& binary, std::vector<std::string> args,
      const std::string& work_dir, const std::string& name, int port = 0,
      absl::Duration deadline = absl::Seconds(30));
  // Starts the process without waiting (several members of a cluster,
  // which become ready only together). Then AwaitReady().
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Launch(
      ServerProcessOptions options);
  absl::Status AwaitReady();
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return process_->pid(); }
  const std::string& name() const { return options_.name; }
  // The port it serves on (PortFile: known once ready).
  int port() const { return port_; }
  std::string address() const;  // "<host>:<port>"
  // PortFile: the port of the server's metrics listener (/metrics and the
  // status page), once it wrote it; NOT_FOUND if it has not within
  // `timeout` (a server started with --metrics_listen= has none).
  absl::StatusOr<int> MetricsPort(absl::Duration timeout = absl::Seconds(10)) const;
  // "http://<host>:<metrics port>" (no trailing slash), or the error.
  absl::StatusOr<std::string> MetricsUrl() const;
  const std::string& log_path() const { return log_path_; }
  ChildProcess& process() { return *process_; }

  // SIGKILL, and waits for the exit; returns the wait status.
  int Kill() { return process_->Kill(); }
  // SIGSTOP, returning once it is stopped; SIGCONT.
  absl::Status Pause() { return process_->StopAndWait(); }
  void Resume() { process_->Signal(SIGCONT); }
  // stop_signal (SIGCONT first); OK iff it exited with status 0 within
  // `deadline`. SIGKILL after it.
  absl::Status Terminate(absl::Duration deadline = absl::Seconds(30));
  // Threads of the process now (from /proc/<pid>/status).
  absl::StatusOr<int> ThreadCount() const;
  // The last `bytes` of its log, for failure messages.
  std::string LogTail(size_t bytes = 4000) const;
  // What it logged since this start.
  std::string LogSinceStart() const;
  // OK once what it logged since this start contains `text`; else
  // DEADLINE_EXCEEDED after `timeout`, with the log's tail. (A server may
  // log its start-up line after its port file is written.)
  absl::Status WaitForLog(absl::string_view text,
                          absl::Duration timeout = absl::Seconds(30)) const;

 private:
  explicit ServerProcess(ServerProcessOptions options) : options_(std::move(options)) {}
  std::string PortFilePath() const;
  std::string MetricsPortFilePath() const;
  // OK once ready; UNAVAILABLE (not yet) with the reason otherwise.
  absl::Status CheckReady();

  const ServerProcessOptions options_;
  std::string log_path_;
  size_t log_offset_ = 0;  // where this start's log begins
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_SERVER_PROCESS_H_
