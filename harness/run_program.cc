#include "harness/run_program.h"

#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "harness/child_process.h"
#include "harness/log_file.h"

namespace fencegate::testing {

absl::StatusOr<std::string> FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(dirs, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("no program '", name, "' in PATH=", dirs));
}

absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::string& stdin_text) {
  ChildProcess::Options options;
  options.argv = argv;
  return RunProgram(std::move(options), timeout, stdin_text);
}

absl::StatusOr<ProgramResult> RunProgram(ChildProcess::Options options,
                                         absl::Duration timeout,
                                         const std::string& stdin_text) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no program given");
  if (options.argv[0].find('/') == std::string::npos) {
    absl::StatusOr<std::string> path = FindProgram(options.argv[0]);
    if (!path.ok()) return path.status();
    options.argv[0] = *path;
  }
  const std::string program = options.argv[0];
  const char* tmp = std::getenv("TMPDIR");
  std::string err_path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fg-run-XXXXXX");
  const int err_fd = mkstemp(err_path.data());
  if (err_fd < 0) return absl::InternalError("mkstemp failed");
  close(err_fd);

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
    (*child)->Kill();
    unlink(err_path.c_str());
    return absl::DeadlineExceededError(
        absl::StrCat(program, " did not finish within ", absl::FormatDuration(timeout)));
  }
  result.stderr_text = ReadWholeFile(err_path);
  unlink(err_path.c_str());
  result.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  return result;
}

}  // namespace fencegate::testing
