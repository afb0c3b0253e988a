// WorkerProcess: one fencegate-torture-worker child of the harness, with the
// control page it shares with it (worker_control.h).
//
// Faults on one worker must not overlap (a pause inside a pause means
// nothing): a fault holds `episode_mu` for as long as it acts on the worker.
//
// Thread safety: thread-safe. The destructor kills the worker if it still
// runs.
#ifndef FENCEGATE_TESTS_TORTURE_WORKER_PROCESS_H_
#define FENCEGATE_TESTS_TORTURE_WORKER_PROCESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "harness/child_process.h"
#include "tests/torture/worker_control.h"

namespace fencegate::torture {

struct WorkerProcessOptions {
  std::string binary;  // fencegate-torture-worker
  std::string name;    // "w3"
  std::string run_dir;
  std::string lockservice;  // a gRPC target: host:port, or ipv4:a,b,c
  std::string gateway;
  std::string postgres;           // non-empty: a SQL worker (worker.h)
  std::string planted_bug;        // a SQL worker's
  std::string network_namespace;  // empty: this process's
  std::vector<std::string> resources;
  uint64_t seed = 1;
  absl::Duration min_ttl;
  absl::Duration max_ttl;
  absl::Duration max_think;
  absl::Duration gateway_timeout;
  bool streams = false;  // lock and gateway calls on the Session streams
  // The kinds of lock (WorkerOptions): shares of rounds, the semaphore.
  double shared_rounds = 0;
  double permit_rounds = 0;
  double multi_rounds = 0;
  std::string semaphore;
  uint32_t permits = 2;
  double elect_rounds = 0;  // and their election
  std::string election;
};

class WorkerProcess {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerProcess>> Start(
      const WorkerProcessOptions& options);

  const std::string& name() const { return name_; }
  pid_t pid() const { return process_->pid(); }
  WorkerControl& control() { return **control_; }
  testing::ChildProcess& process() { return *process_; }

  // Asks it to finish its round and exit; waits up to `timeout`, then kills
  // it. OK iff it exited 0 by itself.
  absl::Status Quit(absl::Duration timeout);

  // kill -9, then starts it again as a new incarnation: named
  // "<name>.<n>" (its history file, holders and log ids new), on the same
  // control page, reset. Callers hold episode_mu: process() changes.
  absl::Status Restart();

  absl::Mutex episode_mu;

 private:
  WorkerProcess() = default;
  // Starts the process as `name`, on the control page of options_.name.
  absl::Status Launch(const std::string& name);

  WorkerProcessOptions options_;
  int incarnation_ = 0;
  std::string name_;
  std::unique_ptr<SharedWorkerControl> control_;
  std::unique_ptr<testing::ChildProcess> process_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_WORKER_PROCESS_H_
