// ServerNode: one server of a torture run (a test build of the lock service
// or the gateway) as a ServerProcess (harness/server_process.h), and
// the faults that can be done to it.
//
// It keeps one address for the whole run, so the workers find it again
// after every restart: on loopback, a free port picked below the kernel's
// ephemeral range (harness/free_port.h) at the first start; on a host
// of the run's VirtualNetwork (harness/network_namespaces.h), the
// host's address and a fixed port, in the host's namespace. Its log, failpoint
// file and libfaketime timestamp file live in the run directory; where it
// keeps its data is up to the caller's arguments (a SQLite file there, or a
// PostgreSQL URI). With fake time on it runs with
//   LD_PRELOAD=<libfaketime> FAKETIME_TIMESTAMP_FILE=<file>
//   FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1
// in its environment, so SetClockOffset() moves its CLOCK_REALTIME at once
// and leaves CLOCK_MONOTONIC (its lease clock) alone. With a disk database
// it runs under the disk-fault preload too (tests/disk/power_cut.h), which
// disk() drives, and every start after the first follows a power cut of
// that database: whatever stopped the server (kill -9, a failpoint crash,
// its own fail-stop) cut the power too.
//
// Only the process this node started is ever signalled, by its PID; it
// dies with the harness (harness/child_process.h).
//
// Thread safety: thread-safe; the faults of one node are meant to be driven
// from one thread at a time (FaultInjector does).
#ifndef FENCEGATE_TESTS_TORTURE_SERVER_NODE_H_
#define FENCEGATE_TESTS_TORTURE_SERVER_NODE_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "harness/server_process.h"
#include "tests/disk/power_cut.h"

namespace fencegate::torture {

struct ServerNodeOptions {
  std::string name;    // "lockservice", "gateway", "gateway-1": names its files
  std::string binary;  // the test build
  std::string run_dir;
  std::vector<std::string> extra_args;  // storage (--db=...), bugs, security
  std::string faketime_library;         // empty: no fake time
  // A SQLite file the server keeps its state in: non-empty runs it under
  // the disk-fault preload (see above).
  std::string disk_database;
  // Empty: 127.0.0.1 of this namespace, a free port. Else the namespace to
  // run in, and the address and port to listen on there.
  std::string network_namespace;
  std::string host;
  int port = 0;
};

class ServerNode {
 public:
  explicit ServerNode(ServerNodeOptions options);
  ~ServerNode();

  // First start: picks the port. Later: the same port again.
  absl::Status Start();
  // SIGKILL, and reaps it. No-op if it is not running.
  void Kill();
  // SIGSTOP and wait until stopped; SIGCONT.
  absl::Status Stop();
  void Continue();
  // SIGTERM; OK iff it exited 0 within `grace` (a clean shutdown).
  absl::Status Terminate(absl::Duration grace = absl::Seconds(30));

  // Arms failpoint `name` with "crash", "stall" or "hold"
  // (common/test_hooks/test_hooks.h), only where it passes `subject` if one is
  // given, or disarms every failpoint, and every disk fault, with Disarm().
  void Arm(const std::string& action, const std::string& failpoint,
           const std::string& subject = "");
  void Disarm();
  // The disk faults of a server with a disk database; null otherwise.
  disk::DiskFaults* disk() const { return disk_.get(); }
  // The armed failpoint was reached (the server wrote <failpoint file>.hit:
  // it stalls there, or is about to crash).
  bool FailpointReached() const;
  // Waits up to `timeout` for the process to exit; its wait status.
  absl::StatusOr<int> WaitForExit(absl::Duration timeout);

  // Sets its CLOCK_REALTIME to real time + `offset` (no-op without fake time).
  void SetClockOffset(absl::Duration offset);

  // If it exited without this node killing it, says how; "" otherwise.
  // Counts the exit once; Start() it again to go on.
  std::string UnexpectedExit();

  bool Running();
  pid_t pid();
  const std::string& name() const { return options_.name; }
  std::string address() const;
  std::string LogTail(size_t bytes = 3000) const;
  // Its whole log, every start's.
  std::string ReadLog() const;

  // Faults on one server must not overlap (a stall armed by one fault, a
  // crash armed by another): a fault holds this for as long as it acts on
  // the server (FaultInjector).
  absl::Mutex episode_mu;

 private:
  std::string File(const std::string& suffix) const;
  absl::Status StartLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartOnce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ServerNodeOptions options_;
  std::unique_ptr<disk::DiskFaults> disk_;  // set once, by the constructor
  absl::Status disk_error_;                 // why there is none, if it failed
  mutable absl::Mutex mu_;
  std::unique_ptr<testing::ServerProcess> process_ ABSL_GUARDED_BY(mu_);
  int port_ ABSL_GUARDED_BY(mu_) = 0;
  bool killed_ ABSL_GUARDED_BY(mu_) = false;  // by us: an expected exit
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_SERVER_NODE_H_
