#include "tests/testing/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

extern char** environ;

namespace fencegate::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::string& binary, std::vector<std::string> args,
    const std::string& work_dir, const std::string& name, int port,
    absl::Duration deadline) {
  std::unique_ptr<ServerProcess> process(new ServerProcess());
  const std::string port_file = absl::StrCat(work_dir, "/", name, ".port");
  process->log_path_ = absl::StrCat(work_dir, "/", name, ".log");
  unlink(port_file.c_str());
  args.insert(args.begin(), binary);
  args.push_back(absl::StrCat("--listen=127.0.0.1:", port));
  args.push_back(absl::StrCat("--port_file=", port_file));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                   process->log_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  int rc = posix_spawn(&process->pid_, binary.c_str(), &actions, nullptr,
                       argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    process->pid_ = -1;
    return absl::InternalError(absl::StrCat("cannot spawn ", binary, ": errno ", rc));
  }

  const absl::Time give_up = absl::Now() + deadline;
  while (absl::Now() < give_up) {
    int status = 0;
    if (waitpid(process->pid_, &status, WNOHANG) == process->pid_) {
      process->pid_ = -1;
      return absl::InternalError(absl::StrCat(name, " exited during start-up:\n",
                                              process->LogTail()));
    }
    int bound = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)), &bound) &&
        bound > 0) {
      process->port_ = bound;
      return process;
    }
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  return absl::DeadlineExceededError(absl::StrCat(
      name, " did not publish its port within ", absl::FormatDuration(deadline),
      ":\n", process->LogTail()));
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Signal(SIGKILL);
}

std::string ServerProcess::address() const { return absl::StrCat("127.0.0.1:", port_); }

int ServerProcess::Signal(int signal) {
  if (pid_ <= 0) return 0;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

absl::Status ServerProcess::Terminate(absl::Duration deadline) {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  kill(pid_, SIGTERM);
  const absl::Time give_up = absl::Now() + deadline;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (absl::Now() > give_up) {
      Signal(SIGKILL);
      return absl::DeadlineExceededError("did not exit after SIGTERM:\n" + LogTail());
    }
    absl::SleepFor(absl::Milliseconds(10));  // poll interval, under a deadline
  }
  pid_ = -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("exit status ", status, ":\n", LogTail()));
}

absl::StatusOr<int> ServerProcess::ThreadCount() const {
  std::ifstream in(absl::StrCat("/proc/", pid_, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "Threads:")) {
      int threads = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &threads)) return threads;
    }
  }
  return absl::NotFoundError("no Threads: line");
}

std::string ServerProcess::LogTail(size_t bytes) const {
  std::string log = ReadFile(log_path_);
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace fencegate::testing
