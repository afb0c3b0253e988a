// StartServer: one of fencegate's server binaries as a child process of the
// demo, listening on 127.0.0.1 port 0 (a free port), with its database and
// its log (stderr) in the demo's work directory. The port is read from the
// file the server writes once it serves (--port_file), polled under a
// deadline.
//
// Thread safety: free function.
#ifndef FENCEGATE_EXAMPLES_DEMO_SERVER_LAUNCHER_H_
#define FENCEGATE_EXAMPLES_DEMO_SERVER_LAUNCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/child_process.h"

namespace fencegate::demo {

struct RunningServer {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
  std::string address;   // 127.0.0.1:<port>
  std::string log_path;  // its stderr
};

// Runs `binary` --listen=127.0.0.1:0 --port_file=<dir>/<name>.port
// --db=<dir>/<name>.db plus `extra_args`.
absl::StatusOr<RunningServer> StartServer(const std::string& binary,
                                          const std::string& name,
                                          const std::string& work_dir,
                                          const std::vector<std::string>& extra_args = {},
                                          absl::Duration timeout = absl::Seconds(30));

// The last `bytes` of a file (a server's log), for error messages.
std::string FileTail(const std::string& path, size_t bytes = 2000);

}  // namespace fencegate::demo

#endif  // FENCEGATE_EXAMPLES_DEMO_SERVER_LAUNCHER_H_
