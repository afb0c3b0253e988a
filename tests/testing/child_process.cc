#include "tests/testing/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fencegate::demo {
namespace {

// Writing to a child that has died must fail with EPIPE, not kill us.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

// Runs in the child between fork() and exec(): async-signal-safe calls only.
[[noreturn]] void ExecChild(char* const* argv, int stdin_fd, int stdout_fd, int stderr_fd,
                            int death_signal, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, death_signal);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (stdin_fd >= 0) dup2(stdin_fd, STDIN_FILENO);
  if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
  if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);
  execv(argv[0], argv);
  static const char kMessage[] = "exec failed\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(127);
}

absl::Status ErrnoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(Options options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no program given");
  IgnoreSigpipeOnce();
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->name_ = options.argv[0].substr(options.argv[0].rfind('/') + 1);

  // Everything the child needs is prepared before fork().
  std::vector<char*> argv;
  for (std::string& arg : options.argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  int child_in = -1, child_out = -1, child_err = -1;
  if (options.pipe_stdin) {
    if (pipe2(in_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe");
    child_in = in_pipe[0];
  } else {
    child_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (!options.stderr_path.empty()) {
    child_err = open(options.stderr_path.c_str(),
                     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (child_err < 0) return ErrnoError(absl::StrCat("open ", options.stderr_path));
  }
  if (options.pipe_stdout) {
    if (pipe2(out_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe");
    child_out = out_pipe[1];
  } else {
    child_out = child_err;  // -1: inherit ours
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    ExecChild(argv.data(), child_in, child_out, child_err, options.death_signal, parent);
  }
  const int fork_errno = errno;
  for (int fd : {child_in, child_err, out_pipe[1]}) {
    if (fd >= 0) close(fd);
  }
  child->stdin_fd_ = in_pipe[1];
  child->stdout_fd_ = out_pipe[0];
  if (pid < 0) {
    errno = fork_errno;
    return ErrnoError("fork");
  }
  setpgid(pid, pid);  // also here, so it holds before either side goes on
  child->pid_ = pid;
  return child;
}

ChildProcess::~ChildProcess() {
  CloseStdin();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  absl::MutexLock lock(&mu_);
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    ReapLocked(/*block=*/true);
  }
}

bool ChildProcess::ReapLocked(bool block) {
  if (reaped_) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    reaped_ = true;
    wait_status_ = status;
  }
  return reaped_;
}

bool ChildProcess::Signal(int signal) {
  absl::MutexLock lock(&mu_);
  if (ReapLocked(/*block=*/false)) return false;
  return kill(pid_, signal) == 0;
}

absl::Status ChildProcess::StopAndWait(absl::Duration timeout) {
  if (!Signal(SIGSTOP)) {
    return absl::FailedPreconditionError(absl::StrCat(name_, " is not running"));
  }
  const absl::Time give_up = absl::Now() + timeout;
  while (ProcessState(pid_) != 'T') {
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(name_, " did not stop"));
    }
    absl::SleepFor(absl::Milliseconds(1));  // poll interval, under a deadline
  }
  return absl::OkStatus();
}

bool ChildProcess::Running() {
  absl::MutexLock lock(&mu_);
  return !ReapLocked(/*block=*/false);
}

absl::StatusOr<int> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (ReapLocked(/*block=*/false)) return wait_status_;
    }
    if (absl::Now() >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          name_, " (pid ", pid_, ") still runs after ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(5));  // poll interval, under a deadline
  }
}

int ChildProcess::Terminate(absl::Duration grace) {
  Signal(SIGCONT);  // a stopped process could not act on SIGTERM
  Signal(SIGTERM);
  absl::StatusOr<int> status = Wait(grace);
  if (status.ok()) return *status;
  Signal(SIGKILL);
  absl::MutexLock lock(&mu_);
  ReapLocked(/*block=*/true);
  return wait_status_;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

char ProcessState(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the name may contain spaces
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    const int s = WTERMSIG(wait_status);
    return absl::StrCat("killed by signal ", s, " (", strsignal(s), ")");
  }
  return absl::StrCat("wait status ", wait_status);
}

absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::string& stdin_text) {
  const char* tmp = std::getenv("TMPDIR");
  std::string err_path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fg-run-XXXXXX");
  const int err_fd = mkstemp(err_path.data());
  if (err_fd < 0) return ErrnoError("mkstemp");
  close(err_fd);

  ChildProcess::Options options;
  options.argv = argv;
  options.stderr_path = err_path;
  options.pipe_stdin = true;
  options.pipe_stdout = true;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  if (!child.ok()) {
    unlink(err_path.c_str());
    return child.status();
  }
  if (!stdin_text.empty()) {
    (void)!write((*child)->stdin_fd(), stdin_text.data(), stdin_text.size());
  }
  (*child)->CloseStdin();

  ProgramResult result;
  const absl::Time give_up = absl::Now() + timeout;
  char buffer[4096];
  for (;;) {
    const absl::Duration left = give_up - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    struct pollfd p = {(*child)->stdout_fd(), POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = read((*child)->stdout_fd(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed stdout (it is exiting)
    result.stdout_text.append(buffer, n);
  }
  absl::StatusOr<int> status =
      (*child)->Wait(std::max(give_up - absl::Now(), absl::Milliseconds(100)));
  if (!status.ok()) {
    (*child)->Terminate(absl::ZeroDuration());
    unlink(err_path.c_str());
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout)));
  }
  std::ifstream err_in(err_path);
  std::stringstream err;
  err << err_in.rdbuf();
  result.stderr_text = err.str();
  unlink(err_path.c_str());
  result.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  return result;
}

}  // namespace fencegate::demo
