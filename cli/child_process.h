// ChildProcess: the command `fencegate run` runs (run_command.cc), started
// with fork + execvp, signalled as a process group, and reaped without
// blocking.
//
// The child gets
//   - its own process group (setpgid), whose id is its pid, so that a
//     signal reaches the command and everything it started;
//   - PR_SET_PDEATHSIG(SIGKILL), checked against getppid() after it is set,
//     so that the child dies with the thread that forked it, even when this
//     process is SIGKILLed. REQUIRES: Start() on the main thread (the
//     kernel sends the death signal when the forking *thread* ends);
//   - an empty signal mask (the parent blocks the signals it watches,
//     blocked_signals.h) and SIGPIPE's disposition from `sigpipe`, so that
//     the command starts with what `fencegate run` was started with;
//   - this process's environment plus `env` ("NAME=value", replacing an
//     inherited NAME).
// Whether the exec failed is told through a pipe marked close-on-exec: a
// successful exec closes it (EOF), a failed one writes its errno first.
// Only async-signal-safe calls run between fork() and exec(): everything
// the child needs is prepared before.
//
// Thread safety: not thread-safe; one thread owns a ChildProcess. The
// group is signalled only while the child is unreaped (running, or a
// zombie that ExitCode() saw and left in place), so its pid, and with it
// the group's id, cannot have been recycled.
#ifndef FENCEGATE_CLI_CHILD_PROCESS_H_
#define FENCEGATE_CLI_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fencegate::cli {

class ChildProcess {
 public:
  // Starts argv[0] (looked up in $PATH when it has no '/'), as above.
  // A failed exec: the child is reaped and the status names the program
  // and the errno's text (NOT_FOUND for ENOENT, PERMISSION_DENIED for
  // EACCES, INTERNAL otherwise). REQUIRES: argv is not empty.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv, const std::vector<std::string>& env,
      const struct sigaction& sigpipe);
  // Reaps the child if it has exited; does not wait for one that runs (a
  // caller that returns early leaves it to its end, or the death signal).
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `signal` to the child's process group: the command and what it
  // started. After Reap(): a no-op.
  void SignalGroup(int signal);
  // The exit code a shell would give once the child has exited (its exit
  // status, or 128 + the signal that killed it); nullopt while it runs.
  // Never blocks, and leaves the child unreaped (a zombie holding its pid),
  // so that SignalGroup() can still reach what is left of its group.
  std::optional<int> ExitCode();
  // Reaps the child once ExitCode() said it exited. Idempotent.
  void Reap();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}

  const pid_t pid_;
  std::optional<int> exit_code_;
  bool reaped_ = false;
};

}  // namespace fencegate::cli

#endif  // FENCEGATE_CLI_CHILD_PROCESS_H_
