#include "tests/torture/worker_process.h"

#include <signal.h>
#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fencegate::torture {

absl::StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(
    const WorkerProcessOptions& options) {
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess());
  worker->options_ = options;
  absl::StatusOr<std::unique_ptr<SharedWorkerControl>> control =
      SharedWorkerControl::Create(
          absl::StrCat(options.run_dir, "/worker-", options.name, ".control"));
  if (!control.ok()) return control.status();
  worker->control_ = *std::move(control);
  if (absl::Status started = worker->Launch(options.name); !started.ok()) return started;
  return worker;
}

absl::Status WorkerProcess::Restart() {
  process_->Signal(SIGKILL);
  (void)process_->Wait(absl::InfiniteDuration());
  WorkerControl& c = control();
  c.holding.store(0);
  c.token.store(0);
  c.stop_before_write.store(0);
  return Launch(absl::StrCat(options_.name, ".", ++incarnation_));
}

absl::Status WorkerProcess::Launch(const std::string& name) {
  const WorkerProcessOptions& options = options_;
  const std::string prefix = absl::StrCat(options.run_dir, "/worker-", name);
  testing::ChildProcess::Options child;
  child.argv = {
      options.binary,
      absl::StrCat("--name=", name),
      absl::StrCat("--lockservice=", options.lockservice),
      absl::StrCat("--gateway=", options.gateway),
      absl::StrCat("--resources=", absl::StrJoin(options.resources, ",")),
      absl::StrCat("--seed=", options.seed + 100 * incarnation_),
      absl::StrCat("--min_ttl=", absl::FormatDuration(options.min_ttl)),
      absl::StrCat("--max_ttl=", absl::FormatDuration(options.max_ttl)),
      absl::StrCat("--max_think=", absl::FormatDuration(options.max_think)),
      absl::StrCat("--gateway_timeout=", absl::FormatDuration(options.gateway_timeout)),
      absl::StrCat("--history=", prefix, ".history"),
      absl::StrCat("--control=", options.run_dir, "/worker-", options.name, ".control")};
  if (!options.postgres.empty()) {
    child.argv.push_back(absl::StrCat("--postgres=", options.postgres));
  }
  if (!options.planted_bug.empty()) {
    child.argv.push_back(absl::StrCat("--planted_bug=", options.planted_bug));
  }
  if (options.streams) child.argv.push_back("--streams");
  if (options.shared_rounds + options.permit_rounds + options.multi_rounds +
          options.elect_rounds >
      0) {
    child.argv.push_back(absl::StrCat("--shared_rounds=", options.shared_rounds));
    child.argv.push_back(absl::StrCat("--permit_rounds=", options.permit_rounds));
    child.argv.push_back(absl::StrCat("--multi_rounds=", options.multi_rounds));
    child.argv.push_back(absl::StrCat("--semaphore=", options.semaphore));
    child.argv.push_back(absl::StrCat("--permits=", options.permits));
    child.argv.push_back(absl::StrCat("--elect_rounds=", options.elect_rounds));
    child.argv.push_back(absl::StrCat("--election=", options.election));
  }
  child.stderr_path = prefix + ".log";
  child.network_namespace = options.network_namespace;
  absl::StatusOr<std::unique_ptr<testing::ChildProcess>> process =
      testing::ChildProcess::Start(child);
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  name_ = name;
  return absl::OkStatus();
}

absl::Status WorkerProcess::Quit(absl::Duration timeout) {
  control().quit.store(1);
  process_->Signal(SIGCONT);  // a stopped worker cannot quit
  absl::StatusOr<int> status = process_->Wait(timeout);
  if (!status.ok()) {
    process_->Signal(SIGKILL);
    (void)process_->Wait(absl::InfiniteDuration());
    return absl::DeadlineExceededError(absl::StrCat(
        "worker ", name_, " did not quit within ", absl::FormatDuration(timeout),
        "; killed it (its call in flight, if any, is unknown)"));
  }
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("worker ", name_, " ", testing::DescribeWaitStatus(*status)));
}

}  // namespace fencegate::torture
