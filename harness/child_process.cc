#include "harness/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace fencegate::testing {
namespace {

// Writing to a child that has died must fail with EPIPE, not kill us.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

// The thread every child is forked from: it lives as long as the process,
// so a child's death signal comes when the process dies, not when the
// thread that asked for the child ends (see the header).
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner();  // never destroyed: the thread runs on
    return *spawner;
  }

  // Runs `job` on the spawner thread and returns when it has run.
  void Run(const std::function<void()>& job) {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return job_ == nullptr; };
    mu_.Await(absl::Condition(&idle));
    job_ = &job;
    const uint64_t ticket = ++submitted_;
    auto done = [this, ticket]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return finished_ >= ticket; };
    mu_.Await(absl::Condition(&done));
  }

 private:
  Spawner() {
    std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      auto has_job = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return job_ != nullptr; };
      mu_.Await(absl::Condition(&has_job));
      (*job_)();  // a fork: quick, and no other lock is taken
      job_ = nullptr;
      ++finished_;
    }
  }

  absl::Mutex mu_;
  const std::function<void()>* job_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t submitted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
};

// What the child needs, prepared before fork(): after it, only
// async-signal-safe calls.
struct ExecPlan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int fd3 = -1;  // becomes the child's descriptor 3
  int fd4 = -1;  // and 4
  int death_signal = SIGKILL;
  RunAs run_as;
  int netns_fd = -1;  // -1: stay in the forking thread's namespace
  pid_t parent = -1;
};

// Runs in the child between fork() and exec(): async-signal-safe calls only.
[[noreturn]] void ExecChild(const ExecPlan& plan) {
  setpgid(0, 0);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (plan.stdin_fd >= 0) dup2(plan.stdin_fd, STDIN_FILENO);
  if (plan.stdout_fd >= 0) dup2(plan.stdout_fd, STDOUT_FILENO);
  if (plan.stderr_fd >= 0) dup2(plan.stderr_fd, STDERR_FILENO);
  if (plan.fd3 >= 0 && plan.fd4 >= 0) {
    // Out of the way first: either may be 3 or 4 already.
    const int in = fcntl(plan.fd3, F_DUPFD, 10);
    const int out = fcntl(plan.fd4, F_DUPFD, 10);
    dup2(in, 3);
    dup2(out, 4);
  }
  if (plan.netns_fd >= 0 && setns(plan.netns_fd, CLONE_NEWNET) != 0) {
    static const char kMessage[] = "cannot enter the network namespace\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    _exit(125);
  }
  if (plan.run_as.uid != 0 &&
      (setgroups(1, &plan.run_as.gid) != 0 || setgid(plan.run_as.gid) != 0 ||
       setuid(plan.run_as.uid) != 0)) {
    static const char kMessage[] = "cannot switch user\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    _exit(126);
  }
  // After setuid, which clears it.
  prctl(PR_SET_PDEATHSIG, plan.death_signal);
  if (getppid() != plan.parent) _exit(127);  // the parent died before prctl
  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  static const char kMessage[] = "exec failed\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(127);
}

absl::Status ErrnoError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
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

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(Options options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no program given");
  if (access(options.argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("no executable at ", options.argv[0]));
  }
  IgnoreSigpipeOnce();
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->name_ = options.argv[0].substr(options.argv[0].rfind('/') + 1);

  ExecPlan plan;
  for (std::string& arg : options.argv) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  std::vector<std::string> env = ChildEnvironment(options.env);
  for (std::string& entry : env) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.death_signal = options.death_signal;
  plan.run_as = options.run_as;
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  int fd3_pipe[2] = {-1, -1}, fd4_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd :
         {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], plan.stdin_fd, plan.stderr_fd,
          plan.netns_fd, fd3_pipe[0], fd3_pipe[1], fd4_pipe[0], fd4_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (options.pipe_stdin) {
    if (pipe2(in_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe");
  } else {
    plan.stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (!options.stderr_path.empty()) {
    plan.stderr_fd = open(options.stderr_path.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (plan.stderr_fd < 0) {
      absl::Status error = ErrnoError(absl::StrCat("open ", options.stderr_path));
      close_all();
      return error;
    }
  }
  if (options.pipe_stdout && pipe2(out_pipe, O_CLOEXEC) != 0) {
    absl::Status error = ErrnoError("pipe");
    close_all();
    return error;
  }
  if (options.pipe_fds_3_and_4 &&
      (pipe2(fd3_pipe, O_CLOEXEC) != 0 || pipe2(fd4_pipe, O_CLOEXEC) != 0)) {
    absl::Status error = ErrnoError("pipe");
    close_all();
    return error;
  }
  plan.fd3 = fd3_pipe[0];
  plan.fd4 = fd4_pipe[1];
  if (!options.network_namespace.empty()) {
    const std::string path = "/run/netns/" + options.network_namespace;
    plan.netns_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (plan.netns_fd < 0) {
      absl::Status error = ErrnoError(absl::StrCat("open ", path));
      close_all();
      return error;
    }
  }
  if (options.pipe_stdin) plan.stdin_fd = in_pipe[0];
  plan.stdout_fd =
      options.pipe_stdout ? out_pipe[1] : plan.stderr_fd;  // -1: inherit ours

  pid_t pid = -1;
  int fork_errno = 0;
  Spawner::Get().Run([&] {
    plan.parent = getpid();
    pid = fork();
    if (pid == 0) ExecChild(plan);
    fork_errno = errno;
    if (pid > 0) setpgid(pid, pid);  // also here, so it holds before either side goes on
  });
  for (int fd :
       {plan.stdin_fd, plan.stderr_fd, out_pipe[1], plan.netns_fd, plan.fd3, plan.fd4}) {
    if (fd >= 0) close(fd);
  }
  child->stdin_fd_ = in_pipe[1];
  child->stdout_fd_ = out_pipe[0];
  child->fd3_ = fd3_pipe[1];
  child->fd4_ = fd4_pipe[0];
  if (pid < 0) {
    errno = fork_errno;
    return ErrnoError("fork");
  }
  child->pid_ = pid;
  return child;
}

ChildProcess::~ChildProcess() {
  CloseStdin();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (fd3_ >= 0) close(fd3_);
  if (fd4_ >= 0) close(fd4_);
  absl::MutexLock lock(&mu_);
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    ReapLocked(Reap::kBlock);
  }
}

bool ChildProcess::ReapLocked(Reap how) {
  if (reaped_) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, how == Reap::kBlock ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    reaped_ = true;
    wait_status_ = status;
  }
  return reaped_;
}

bool ChildProcess::Signal(int signal) {
  absl::MutexLock lock(&mu_);
  if (ReapLocked(Reap::kIfExited)) return false;
  return kill(pid_, signal) == 0;
}

int ChildProcess::Kill() {
  absl::MutexLock lock(&mu_);
  if (!ReapLocked(Reap::kIfExited)) {
    kill(pid_, SIGKILL);
    ReapLocked(Reap::kBlock);
  }
  return wait_status_;
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
  return !ReapLocked(Reap::kIfExited);
}

absl::StatusOr<int> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (ReapLocked(Reap::kIfExited)) return wait_status_;
    }
    if (absl::Now() >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          name_, " (pid ", pid_, ") still runs after ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(5));  // poll interval, under a deadline
  }
}

int ChildProcess::Terminate(absl::Duration grace, int signal) {
  Signal(SIGCONT);  // a stopped process could not act on the signal
  Signal(signal);
  absl::StatusOr<int> status = Wait(grace);
  if (status.ok()) return *status;
  return Kill();
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

bool ExitedCleanly(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

}  // namespace fencegate::testing
