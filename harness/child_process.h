// ChildProcess: a program run as a child process: the one place in the tree
// that forks and execs (the process harness of the tests, the demo and the
// torture suite; docs/testing.md, "Starting processes"), but for the
// shipped CLI's `fencegate run`, which has its own (cli/child_process.h). Servers awaited
// until they serve are ServerProcess (server_process.h), built on this.
//
// The child gets
//   - its own process group, so a Ctrl-C at the terminal reaches only the
//     parent, which then stops its children in order;
//   - default signal dispositions and an empty signal mask, whatever the
//     parent blocked or ignored;
//   - a death signal (PR_SET_PDEATHSIG, `death_signal`): if this process
//     dies, even by SIGKILL, the child is signalled too, so nothing is left
//     behind. The kernel sends it when the *thread* that forked the child
//     ends, so every child is forked by one thread of the harness's own that
//     lives as long as the process: a child started from a short-lived
//     thread outlives that thread, not the process;
//   - optionally a pipe to its stdin and one from its stdout; its stderr
//     (and its stdout, unless piped) goes to a file, or is inherited;
//   - optionally more environment variables, another user (`run_as`:
//     PostgreSQL refuses to run as root), and another network namespace
//     (`network_namespace`, a name `ip netns` made, e.g. by
//     VirtualNetwork in network_namespaces.h): the one place where a
//     process is put into a namespace. Without one, a child gets the
//     namespace of the harness's forking thread: the one this process was
//     in when it first started a child.
// Only the process this object started is ever signalled, by its PID, and
// never after it has been reaped (so never a recycled PID).
// Starting a child makes this process ignore SIGPIPE, so that writing to a
// child that died fails with EPIPE instead of killing the writer.
//
// Thread safety: pid(), Signal(), Kill(), StopAndWait(), Running(), Wait()
// and Terminate() are thread-safe; the pipes are for the owning thread. The
// destructor SIGKILLs a child that still runs and reaps it.
#ifndef FENCEGATE_HARNESS_CHILD_PROCESS_H_
#define FENCEGATE_HARNESS_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fencegate::testing {

// Whom a child runs as. 0: as this process.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
};

class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0]: the program's path
    // "NAME=value": set in the child's environment (this process's, plus
    // these; a name given here replaces the inherited one).
    std::vector<std::string> env;
    std::string stderr_path;     // appended to; empty: inherit the parent's stderr
    bool pipe_stdin = false;     // else /dev/null
    bool pipe_stdout = false;    // else stdout goes to stderr_path (or ours)
    // Two more pipes, as descriptors 3 (the child reads what we write to
    // devtools_in_fd()) and 4 (the child writes what we read from
    // devtools_out_fd()): Chromium's --remote-debugging-pipe.
    bool pipe_fds_3_and_4 = false;
    int death_signal = SIGKILL;  // sent to the child when this process dies
    RunAs run_as;
    // Empty: see above. Else /run/netns/<network_namespace>, joined before
    // the exec.
    std::string network_namespace;
  };

  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(Options options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }  // argv[0]'s base name

  // Sends `signal`. False if the child has already been reaped.
  bool Signal(int signal);
  // SIGKILL, and waits for the exit; returns the wait status (that of an
  // earlier exit if it had already exited).
  int Kill();
  // SIGSTOP, and waits up to `timeout` until the kernel shows the child
  // stopped (signals are delivered asynchronously). SIGCONT undoes it.
  absl::Status StopAndWait(absl::Duration timeout = absl::Seconds(10));
  // True until the child has exited and been reaped.
  bool Running();
  // Waits up to `timeout` for the child to exit; returns its wait status
  // (see DescribeWaitStatus), or DEADLINE_EXCEEDED if it still runs.
  absl::StatusOr<int> Wait(absl::Duration timeout);
  // SIGCONT and `signal`, then SIGKILL if it has not exited within `grace`;
  // returns the wait status.
  int Terminate(absl::Duration grace, int signal = SIGTERM);

  // -1 when not piped. The parent owns these ends.
  int stdin_fd() const { return stdin_fd_; }
  int stdout_fd() const { return stdout_fd_; }
  // Closes our end of the child's stdin: it reads EOF.
  void CloseStdin();
  // With pipe_fds_3_and_4: our ends of the child's descriptors 3 and 4
  // (-1 otherwise). The parent owns them.
  int devtools_in_fd() const { return fd3_; }
  int devtools_out_fd() const { return fd4_; }

 private:
  ChildProcess() = default;
  enum class Reap { kIfExited, kBlock };
  // True once the child is reaped.
  bool ReapLocked(Reap how) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  pid_t pid_ = -1;
  std::string name_;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int fd3_ = -1;
  int fd4_ = -1;
  absl::Mutex mu_;
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
  int wait_status_ ABSL_GUARDED_BY(mu_) = 0;
};

// The state letter of a process in /proc/<pid>/stat: 'R' running, 'S'
// sleeping, 'T' stopped, ...; '?' if it cannot be read.
char ProcessState(pid_t pid);

// "exited with status 0", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int wait_status);
// True iff the wait status says: exited with status 0.
bool ExitedCleanly(int wait_status);

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_CHILD_PROCESS_H_
