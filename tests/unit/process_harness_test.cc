// The process harness (harness/child_process.h, server_process.h):
// what every test, the demo and the torture suite rely on when they start
// a process. The children are /bin/sh one-liners.
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/child_process.h"
#include "harness/free_port.h"
#include "harness/log_file.h"
#include "harness/poll.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kShell[] = "/bin/sh";

std::unique_ptr<ChildProcess> StartShell(const std::string& script,
                                         std::vector<std::string> env = {}) {
  ChildProcess::Options options;
  options.argv = {kShell, "-c", script};
  options.env = std::move(env);
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  EXPECT_THAT(child, IsOk());
  return child.ok() ? *std::move(child) : nullptr;
}

// The kernel sends a child's death signal when the thread that forked it
// ends; the harness forks from a thread of its own, so a child started by
// a short-lived thread keeps running.
TEST(ChildProcessTest, OutlivesTheThreadThatStartedIt) {
  std::unique_ptr<ChildProcess> child;
  std::thread starter([&] {
    child = StartShell("exec sleep 60");
    // The thread ends only once the child runs sleep, so the child's death
    // signal was set up while this thread lived.
    if (child != nullptr) {
      EXPECT_THAT(PollUntil(
                      [&] {
                        return ReadWholeFile(absl::StrCat("/proc/", child->pid(),
                                                          "/comm")) == "sleep\n";
                      },
                      absl::Seconds(30), "the child runs sleep"),
                  IsOk());
    }
  });
  starter.join();
  ASSERT_NE(child, nullptr);
  // A death signal would arrive at once; give it a moment to show.
  EXPECT_FALSE(child->Wait(absl::Milliseconds(300)).ok())
      << "the child died with its thread";
  EXPECT_TRUE(child->Running());
  const int status = child->Kill();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << DescribeWaitStatus(status);
  EXPECT_FALSE(child->Running());
  EXPECT_FALSE(child->Signal(SIGTERM)) << "a reaped child must never be signalled";
}

TEST(ChildProcessTest, GetsExtraEnvironmentAndReportsItsExit) {
  std::unique_ptr<ChildProcess> child =
      StartShell("test \"$FG_PROBE\" = yes && exit 7; exit 1", {"FG_PROBE=yes"});
  ASSERT_NE(child, nullptr);
  absl::StatusOr<int> status = child->Wait(absl::Seconds(30));
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(DescribeWaitStatus(*status), "exited with status 7");
  EXPECT_FALSE(ExitedCleanly(*status));
}

TEST(ChildProcessTest, StopAndWaitReturnsOnceTheKernelShowsItStopped) {
  std::unique_ptr<ChildProcess> child = StartShell("exec sleep 60");
  ASSERT_NE(child, nullptr);
  ASSERT_THAT(child->StopAndWait(), IsOk());
  EXPECT_EQ(ProcessState(child->pid()), 'T');
  // Terminate continues a stopped child first, so SIGTERM takes effect.
  const int status = child->Terminate(absl::Seconds(30));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << DescribeWaitStatus(status);
}

TEST(ChildProcessTest, AMissingProgramIsNotFound) {
  ChildProcess::Options options;
  options.argv = {"/nonexistent/fencegate-binary"};
  EXPECT_THAT(ChildProcess::Start(options), StatusIs(absl::StatusCode::kNotFound));
}

TEST(RunProgramTest, CollectsStdoutStderrAndTheExitCode) {
  ASSERT_OK_AND_ASSIGN(ProgramResult result,
                       RunProgram({kShell, "-c", "cat; echo oops >&2; exit 3"},
                                  absl::Seconds(30), "hello\n"));
  EXPECT_EQ(result.stdout_text, "hello\n");
  EXPECT_EQ(result.stderr_text, "oops\n");
  EXPECT_EQ(result.exit_code, 3);
}

TEST(RunProgramTest, KillsAProgramThatOutlivesItsTimeout) {
  EXPECT_THAT(RunProgram({kShell, "-c", "exec sleep 60"}, absl::Milliseconds(200)),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

// A server that is ready once a file exists: the Probe readiness.
ServerProcessOptions FileServer(const TempDir& dir, const std::string& script) {
  ServerProcessOptions options;
  options.process.argv = {kShell, "-c", script};
  options.dir = dir.path();
  options.name = "server";
  options.readiness = Probe{[ready = dir.File("ready")](const ServerProcess&) {
    return ReadWholeFile(ready).empty() ? absl::UnavailableError("no ready file")
                                        : absl::OkStatus();
  }};
  options.start_timeout = absl::Seconds(30);
  return options;
}

// Ports picked one after the other are distinct even before their servers
// bind them (an etcd member's client and peer ports): 1,000 draws from the
// 15,000 ports of the range would repeat one about 33 times if each were
// only checked free.
TEST(PickFreePortTest, NeverHandsOutAPortItGaveLately) {
  std::set<int> ports;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK_AND_ASSIGN(int port, PickFreePort());
    EXPECT_TRUE(ports.insert(port).second) << "port " << port << " given twice, draw " << i;
  }
}

TEST(ServerProcessTest, AProbeDecidesWhenItServesAndTerminateWantsStatusZero) {
  TempDir dir;
  ServerProcessOptions options = FileServer(
      dir,
      absl::StrCat("echo starting >&2; echo yes > ", dir.File("ready"),
                   "; trap 'echo bye >&2; exit 0' TERM; while :; do sleep 0.05; done"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerProcess> server,
                       ServerProcess::Start(std::move(options)));
  EXPECT_THAT(server->LogSinceStart(), HasSubstr("starting"));
  ASSERT_THAT(server->Pause(), IsOk());
  EXPECT_EQ(ProcessState(server->pid()), 'T');
  EXPECT_THAT(server->Terminate(), IsOk());  // resumed, then SIGTERM
  EXPECT_THAT(server->LogTail(), HasSubstr("bye"));
}

TEST(ServerProcessTest, AServerThatExitsDuringStartUpFailsWithItsLog) {
  TempDir dir;
  EXPECT_THAT(ServerProcess::Start(FileServer(dir, "echo cannot bind >&2; exit 2")),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("cannot bind")));
}

TEST(ServerProcessTest, AServerNeverReadyIsKilledAtTheDeadline) {
  TempDir dir;
  ServerProcessOptions options =
      FileServer(dir, absl::StrCat("echo $$ > ", dir.File("pid"), "; exec sleep 60"));
  options.start_timeout = absl::Milliseconds(300);
  EXPECT_THAT(ServerProcess::Start(std::move(options)),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("no ready file")));
  const std::string pid = ReadWholeFile(dir.File("pid"));
  ASSERT_FALSE(pid.empty());
  EXPECT_EQ(ProcessState(std::stoi(pid)), '?') << "the process still runs";
}

TEST(ServerProcessTest, PortFileServersGetListenAndPortFileFlags) {
  TempDir dir;
  // Plays a fencegate server: writes the port its --listen flag names.
  ServerProcessOptions options;
  options.process.argv = {
      kShell, "-c",
      "for a; do case $a in --listen=*) p=${a##*:};; --port_file=*) f=${a#*=};; esac; "
      "done; echo $p > $f.tmp && mv $f.tmp $f; exec sleep 60",
      "sh"};
  options.dir = dir.path();
  options.name = "fake";
  options.port = 4321;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerProcess> server,
                       ServerProcess::Start(std::move(options)));
  EXPECT_EQ(server->port(), 4321);
  EXPECT_EQ(server->address(), "127.0.0.1:4321");
}

}  // namespace
}  // namespace fencegate::testing
