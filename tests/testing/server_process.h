// ServerProcess: one of our server binaries run as a real child process for
// integration tests. It listens on 127.0.0.1:0 and publishes its port through
// --port_file; Start() polls for that file under a deadline (no fixed sleeps).
// Its stderr goes to a log file, shown by LogTail() when a test fails.
//
// Thread safety: one thread drives a ServerProcess. The destructor kills the
// child with SIGKILL if it still runs.
#ifndef FENCEGATE_TESTS_TESTING_SERVER_PROCESS_H_
#define FENCEGATE_TESTS_TESTING_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fencegate::testing {

class ServerProcess {
 public:
  // Runs `binary` with `args` plus --listen=127.0.0.1:<port> (0 unless
  // given) and --port_file=<work_dir>/<name>.port, stderr to <name>.log.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::string& binary, std::vector<std::string> args,
      const std::string& work_dir, const std::string& name, int port = 0,
      absl::Duration deadline = absl::Seconds(30));
  ~ServerProcess();

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>"

  // Sends `signal` and waits for the exit. Returns the wait status.
  int Signal(int signal);
  // SIGTERM, then OK iff the process exited with status 0 within `deadline`.
  absl::Status Terminate(absl::Duration deadline = absl::Seconds(30));
  // Threads of the process now (from /proc/<pid>/status).
  absl::StatusOr<int> ThreadCount() const;
  // The last `bytes` of its log, for failure messages.
  std::string LogTail(size_t bytes = 4000) const;

 private:
  ServerProcess() = default;

  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_SERVER_PROCESS_H_
