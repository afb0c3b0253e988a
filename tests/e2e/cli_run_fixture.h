// The fixture of the `fencegate run` tests (cli_run_test.cc, and
// cli_elect_test.cc for run --elect and the election commands): the real
// CLI runs real `sh` commands against the fixture's real servers; the
// commands write what they saw to files in the test's temp dir, which these
// helpers read. Every wait polls under a deadline.
//
// Thread safety: a gtest fixture; the test's thread owns it.
#ifndef FENCEGATE_TESTS_E2E_CLI_RUN_FIXTURE_H_
#define FENCEGATE_TESTS_E2E_CLI_RUN_FIXTURE_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/fencing_token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/child_process.h"
#include "harness/poll.h"
#include "harness/test_certificates.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {

inline constexpr int kLeaseLost = 7, kCannotRun = 127, kNotExecutable = 126, kUsage = 4,
                     kNotAcquired = 3;
// Patience for things that take a moment on a loaded 2-core machine.
inline constexpr absl::Duration kPatience = absl::Seconds(30);
// A command's long sleep, during which its sh runs a trap at once: `wait`
// gives way to a trapped signal, a foreground sleep would not (nor would
// a sleep not yet started get the signal sent to the group). The traps
// kill the sleep ($!), which ignores SIGINT in the background.
inline constexpr char kSleep[] = "sleep 1000 & wait";

inline std::string ReadRaw(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string ReadFile(const std::string& path) {
  return std::string(absl::StripAsciiWhitespace(ReadRaw(path)));
}

inline bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// True once the command has written a whole line to `path` (the shell's
// redirection makes the file before the line is in it).
inline bool HasLine(const std::string& path) {
  const std::string text = ReadRaw(path);
  return !text.empty() && text.back() == '\n';
}

// A wall-clock time `date +%s.%N` wrote to `path`.
inline absl::Time TimeInFile(const std::string& path) {
  double seconds = 0;
  EXPECT_TRUE(absl::SimpleAtod(ReadFile(path), &seconds)) << path;
  return absl::FromUnixMicros(static_cast<int64_t>(seconds * 1e6));
}

// True once `pid` has exited (gone, or a zombie nobody reaped yet).
inline bool ProcessGone(pid_t pid) {
  const char state = testing::ProcessState(pid);
  return state == '?' || state == 'Z';
}

class CliRunTest : public E2eTest {
 protected:
  // A test that failed may leave a command's group running (its sh, its
  // sleep): each command leads its group, whose id is the pid it wrote.
  void TearDown() override {
    for (pid_t group : groups_) kill(-group, SIGKILL);
    E2eTest::TearDown();
  }

  // Starts `fencegate run` with `flags` and `-- sh -c script`, connected
  // to the fixture's servers; its stderr goes to <dir>/run.log.
  std::unique_ptr<testing::ChildProcess> StartRun(std::vector<std::string> flags,
                                                  const std::string& script,
                                                  bool pipe_stdin = false) {
    testing::ChildProcess::Options options;
    options.argv = {FENCEGATE_CLI_BIN, "run", "--lockservice=" + lockservice_address(),
                    "--gateway=" + gateway_address(), "--timeout=10s"};
    options.argv.insert(options.argv.end(), flags.begin(), flags.end());
    options.argv.insert(options.argv.end(), {"--", "sh", "-c", script});
    options.stderr_path = log_;
    options.pipe_stdin = pipe_stdin;
    auto run = testing::ChildProcess::Start(options);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *std::move(run) : nullptr;
  }

  // Waits for `run` to exit; its exit code (-1: killed by a signal).
  int ExitCode(testing::ChildProcess& run, absl::Duration timeout = kPatience) {
    absl::StatusOr<int> status = run.Wait(timeout);
    EXPECT_TRUE(status.ok()) << status.status() << "\n" << ReadFile(log_);
    if (!status.ok() || !WIFEXITED(*status)) return -1;
    return WEXITSTATUS(*status);
  }

  // Runs `fencegate run` to its end; its exit code.
  int Run(std::vector<std::string> flags, const std::string& script) {
    std::unique_ptr<testing::ChildProcess> run = StartRun(std::move(flags), script);
    return run == nullptr ? -1 : ExitCode(*run);
  }

  // Polls until the command has written a line to `path`.
  void AwaitFile(const std::string& path) {
    EXPECT_THAT(testing::PollUntil([&] { return HasLine(path); }, kPatience, path),
                testing::IsOk());
  }

  // The pid the command wrote to <dir>/pid, once it has.
  pid_t CommandPid() {
    AwaitFile(dir_.File("pid"));
    int pid = 0;
    EXPECT_TRUE(absl::SimpleAtoi(ReadFile(dir_.File("pid")), &pid));
    if (pid > 1) groups_.push_back(pid);
    return pid;
  }

  // The token the command saw in $FENCEGATE_TOKEN (written to <dir>/token).
  uint64_t CommandToken() {
    AwaitFile(dir_.File("token"));
    absl::StatusOr<client::SignedToken> token =
        client::ParseFencingToken(ReadFile(dir_.File("token")));
    EXPECT_TRUE(token.ok()) << token.status();
    return token.ok() ? token->token : 0;
  }

  // Frees `resource` from outside, with the CLI, as an operator would.
  void ReleaseBehindItsBack(const std::string& resource, uint64_t token) {
    ASSERT_OK_AND_ASSIGN(
        testing::ProgramResult release,
        Cli({"release", "--resource=" + resource, absl::StrCat("--token=", token)}));
    ASSERT_EQ(release.exit_code, 0) << release.stderr_text;
  }

  void ExpectFree(const std::string& resource) {
    ASSERT_OK_AND_ASSIGN(client::LockState state, lock_->Describe(resource));
    EXPECT_FALSE(state.held) << "'" << resource << "' still held by " << state.holder;
  }

  // sh: writes the pid and the token it got, and records when a TERM came
  // (then exits 0: `run` must still say the lease was lost).
  std::string RecordingScript(const std::string& rest) {
    return absl::StrCat("trap 'date +%s.%N > ", dir_.File("term"),
                        "; kill $! 2>/dev/null; exit 0' TERM; ",
                        "echo \"$FENCEGATE_TOKEN\" > ", dir_.File("token"),
                        "; echo $$ > ", dir_.File("pid"), "; ", rest);
  }

  const std::string log_ = dir_.File("run.log");
  std::vector<pid_t> groups_;  // of the commands, by the pids they wrote
};

}  // namespace fencegate::e2e

#endif  // FENCEGATE_TESTS_E2E_CLI_RUN_FIXTURE_H_
