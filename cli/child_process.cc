#include "cli/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace fencegate::cli {
namespace {

// What the child needs, prepared before fork(): after it, only
// async-signal-safe calls.
struct ExecPlan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  struct sigaction sigpipe = {};
  pid_t parent = -1;
  int error_fd = -1;  // the pipe's write end, close-on-exec
};

// Tells the parent why the child could not run the command, and ends it.
[[noreturn]] void Fail(int error_fd, int error) {
  (void)!write(error_fd, &error, sizeof(error));
  _exit(127);
}

// Runs in the child between fork() and exec().
[[noreturn]] void ExecChild(const ExecPlan& plan) {
  if (setpgid(0, 0) != 0) Fail(plan.error_fd, errno);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(plan.error_fd, errno);
  // The parent died before prctl: nobody will send the death signal.
  if (getppid() != plan.parent) _exit(127);
  sigaction(SIGPIPE, &plan.sigpipe, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // glibc's execvpe searches $PATH (this process's) on the stack.
  execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  Fail(plan.error_fd, errno);
}

// This process's environment with `overrides` ("NAME=value") set.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides) {
  auto name_of = [](absl::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    bool replaced = false;
    for (const std::string& o : overrides) replaced |= name_of(o) == name_of(*e);
    if (!replaced) env.emplace_back(*e);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

absl::Status ExecError(const std::string& program, int error) {
  const std::string message = absl::StrCat(
      "cannot run '", program, "': ", strerror(error),
      error == ENOENT && program.find('/') == std::string::npos ? " (not found in $PATH)"
                                                                : "");
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::vector<std::string>& env,
    const struct sigaction& sigpipe) {
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = ChildEnvironment(env);
  ExecPlan plan;
  for (std::string& arg : args) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  for (std::string& entry : environment) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.sigpipe = sigpipe;
  plan.parent = getpid();
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  plan.error_fd = error_pipe[1];
  const pid_t pid = fork();
  if (pid == 0) ExecChild(plan);
  const int fork_error = errno;
  close(error_pipe[1]);
  if (pid < 0) {
    close(error_pipe[0]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(fork_error)));
  }
  // Also here, against the race with the child's own setpgid: whichever
  // runs first makes the group, before anyone signals it.
  setpgid(pid, pid);
  std::unique_ptr<ChildProcess> child(new ChildProcess(pid));
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_error))) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child->reaped_ = true;
    return ExecError(argv[0], exec_error);
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (ExitCode().has_value()) Reap();
}

void ChildProcess::SignalGroup(int signal) {
  if (!reaped_) kill(-pid_, signal);
}

std::optional<int> ChildProcess::ExitCode() {
  if (exit_code_.has_value() || reaped_) return exit_code_;
  siginfo_t info = {};
  if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_) {
    return std::nullopt;
  }
  exit_code_ = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  return exit_code_;
}

void ChildProcess::Reap() {
  if (reaped_ || !exit_code_.has_value()) return;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

}  // namespace fencegate::cli
