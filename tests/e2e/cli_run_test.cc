// `fencegate run` (cli/run_command.cc) against the real servers: the real
// CLI runs real `sh` commands that write what they saw (their environment,
// their pid, when a trap ran) to files in the test's temp dir; the test
// checks those files, the exit codes, and what the lock service holds
// afterwards. Every wait polls under a deadline.
//
// Time bounds: the only upper bounds are on how soon the command is told
// of a lost lease, and they are the (the TTL + 1 s after the lock
// service stopped answering) or, for a lease the service ended, far below
// the lease's TTL, so that only the pushed end can meet them. Times the
// commands record are wall-clock (`date`), compared with absl::Now() on
// the same machine.
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
namespace {

using ::testing::HasSubstr;

constexpr int kLeaseLost = 7, kCannotRun = 127, kUsage = 4, kNotAcquired = 3;
// Patience for things that take a moment on a loaded 2-core machine.
constexpr absl::Duration kPatience = absl::Seconds(30);
// A command's long sleep, during which its sh runs a trap at once: `wait`
// gives way to a trapped signal, a foreground sleep would not (nor would
// a sleep not yet started get the signal sent to the group). The traps
// kill the sleep ($!), which ignores SIGINT in the background.
constexpr char kSleep[] = "sleep 1000 & wait";

std::string ReadRaw(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ReadFile(const std::string& path) {
  return std::string(absl::StripAsciiWhitespace(ReadRaw(path)));
}

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// True once the command has written a whole line to `path` (the shell's
// redirection makes the file before the line is in it).
bool HasLine(const std::string& path) {
  const std::string text = ReadRaw(path);
  return !text.empty() && text.back() == '\n';
}

// A wall-clock time `date +%s.%N` wrote to `path`.
absl::Time TimeInFile(const std::string& path) {
  double seconds = 0;
  EXPECT_TRUE(absl::SimpleAtod(ReadFile(path), &seconds)) << path;
  return absl::FromUnixMicros(static_cast<int64_t>(seconds * 1e6));
}

// True once `pid` has exited (gone, or a zombie nobody reaped yet).
bool ProcessGone(pid_t pid) {
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

TEST_F(CliRunTest, CommandSeesItsLeaseAndItsExitCodePassesThrough) {
  // The command writes through the gateway with the token it was given,
  // finding the gateway by $FENCEGATE_GATEWAY alone.
  const std::string script = absl::StrCat(
      "echo \"$FENCEGATE_RESOURCE\" > ", dir_.File("resource"), "; ",
      "echo \"$FENCEGATE_TOKEN\" > ", dir_.File("token"), "; ",
      "echo \"$FENCEGATE_LOCKSERVICE $FENCEGATE_GATEWAY\" > ", dir_.File("addresses"),
      "; ", FENCEGATE_CLI_BIN,
      " write --resource=\"$FENCEGATE_RESOURCE\" --token=\"$FENCEGATE_TOKEN\" "
      "--key=k --value=from-run || exit 9; exit 42");
  EXPECT_EQ(Run({"--resource=job", "--holder=runner", "--ttl=30s"}, script), 42)
      << ReadFile(log_);
  EXPECT_EQ(ReadFile(dir_.File("resource")), "job");
  EXPECT_EQ(ReadFile(dir_.File("addresses")),
            absl::StrCat(lockservice_address(), " ", gateway_address()));
  const uint64_t token = CommandToken();
  ASSERT_GT(token, 0u);
  ASSERT_OK_AND_ASSIGN(client::ReadResult read,
                       gateway_client_->ReadUnfenced("job", "k"));
  EXPECT_EQ(read.value, "from-run");
  // Released: someone else gets it at once.
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome other, lock_->Acquire("job", "other"));
  EXPECT_TRUE(other.acquired);
  EXPECT_GT(other.token, token);
  // A command killed by a signal: 128 + n, as a shell says.
  EXPECT_EQ(Run({"--resource=job2"}, "kill -KILL $$"), 128 + SIGKILL);
  ExpectFree("job2");
}

TEST_F(CliRunTest, HeldLockStartsNothing) {
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome held, lock_->Acquire("busy", "other"));
  ASSERT_TRUE(held.acquired);
  EXPECT_EQ(Run({"--resource=busy"}, absl::StrCat("touch ", dir_.File("ran"))),
            kNotAcquired);
  EXPECT_THAT(ReadFile(log_), HasSubstr("the command was not started"));
  EXPECT_FALSE(FileExists(dir_.File("ran")));

  // Queued for it: a SIGTERM ends the wait, and run, by that signal.
  std::unique_ptr<testing::ChildProcess> run = StartRun(
      {"--resource=busy", "--wait=60s"}, absl::StrCat("touch ", dir_.File("ran")));
  ASSERT_NE(run, nullptr);
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    absl::StatusOr<client::LockState> state = lock_->Describe("busy");
                    return state.ok() && state->waiters == 1;
                  },
                  kPatience, "run queued for the lock"),
              testing::IsOk());
  ASSERT_TRUE(run->Signal(SIGTERM));
  ASSERT_OK_AND_ASSIGN(int status, run->Wait(kPatience));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << testing::DescribeWaitStatus(status);
  EXPECT_THAT(ReadFile(log_), HasSubstr("SIGTERM while acquiring 'busy'"));
  EXPECT_FALSE(FileExists(dir_.File("ran")));
}

// Two runs on one host with the default --holder are two holders (not one
// holder's re-entry, which would run both commands at once), and the second,
// queued for longer than its own TTL, gets a whole lease when its turn comes:
// the client counts a waited grant from the grant, not from the call.
TEST_F(CliRunTest, TwoRunsAreTwoHoldersAndALongWaitInLineKeepsAWholeLease) {
  std::unique_ptr<testing::ChildProcess> first =
      StartRun({"--resource=shared", "--ttl=30s"},
               absl::StrCat("echo $$ > ", dir_.File("pid"), "; while [ ! -e ",
                            dir_.File("done"), " ]; do sleep 0.05; done"));
  ASSERT_NE(first, nullptr);
  CommandPid();
  std::unique_ptr<testing::ChildProcess> second =
      StartRun({"--resource=shared", "--ttl=1s", "--wait=60s"},
               absl::StrCat("echo ran > ", dir_.File("second"), "; exit 5"));
  ASSERT_NE(second, nullptr);
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    absl::StatusOr<client::LockState> state = lock_->Describe("shared");
                    return state.ok() && state->waiters == 1;
                  },
                  kPatience, "the second run queued behind the first"),
              testing::IsOk());
  // The time under test: the second run waits in line past its own TTL.
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_FALSE(FileExists(dir_.File("second")));
  std::ofstream(dir_.File("done")) << "done\n";
  EXPECT_EQ(ExitCode(*first), 0) << ReadFile(log_);
  EXPECT_EQ(ExitCode(*second), 5) << ReadFile(log_);
  EXPECT_TRUE(FileExists(dir_.File("second")));
}

TEST_F(CliRunTest, LeaseLapsedWhileTheLockServiceIsStoppedStopsTheCommand) {
  constexpr absl::Duration kRunTtl = absl::Seconds(2);
  std::unique_ptr<testing::ChildProcess> run =
      StartRun({"--resource=r", "--ttl=2s"}, RecordingScript(kSleep));
  ASSERT_NE(run, nullptr);
  CommandPid();
  // Renewals go unanswered from here: the client's own clock ends the
  // lease within the TTL.
  ASSERT_THAT(lockservice_->Pause(), testing::IsOk());
  const absl::Time stopped = absl::Now();
  ASSERT_THAT(testing::PollUntil([&] { return HasLine(dir_.File("term")); }, kPatience,
                                 "the command's SIGTERM"),
              testing::IsOk());
  // The bound: SIGTERM within the TTL + 1 s of the lock service
  // going silent (the lease lapses at the latest a TTL after its last
  // renewal was sent, which was before the stop).
  EXPECT_LE(TimeInFile(dir_.File("term")) - stopped, kRunTtl + absl::Seconds(1));
  lockservice_->Resume();  // so that run's release goes through
  EXPECT_EQ(ExitCode(*run), kLeaseLost);
  EXPECT_THAT(ReadFile(log_), HasSubstr("lease lost"));
}

TEST_F(CliRunTest, LeaseEndedByTheServiceStopsTheCommandAtOnce) {
  // A TTL the test never reaches: only the pushed end can stop it in time.
  std::unique_ptr<testing::ChildProcess> run =
      StartRun({"--resource=r", "--ttl=60s"}, RecordingScript(kSleep));
  ASSERT_NE(run, nullptr);
  const pid_t pid = CommandPid();
  ReleaseBehindItsBack("r", CommandToken());
  const absl::Time released = absl::Now();
  AwaitFile(dir_.File("term"));
  // Generous: a push arrives in milliseconds; a renewal is due only every
  // 20 s and the lease would lapse after 60 s.
  EXPECT_LE(TimeInFile(dir_.File("term")) - released, absl::Seconds(5));
  EXPECT_EQ(ExitCode(*run), kLeaseLost);
  EXPECT_TRUE(ProcessGone(pid));
  EXPECT_THAT(ReadFile(log_), HasSubstr("lease lost"));
  EXPECT_THAT(ReadFile(log_), ::testing::Not(HasSubstr("SIGKILL")));
}

TEST_F(CliRunTest, CommandThatIgnoresSigtermIsKilledAfterKillAfter) {
  std::unique_ptr<testing::ChildProcess> run = StartRun(
      {"--resource=r", "--ttl=60s", "--kill_after=1s"},
      absl::StrCat("trap '' TERM; echo \"$FENCEGATE_TOKEN\" > ", dir_.File("token"),
                   "; echo $$ > ", dir_.File("pid"), "; while :; do sleep 1000; done"));
  ASSERT_NE(run, nullptr);
  const pid_t pid = CommandPid();
  const uint64_t token = CommandToken();
  // The lease cannot be lost before the release is sent.
  const absl::Time releasing = absl::Now();
  ReleaseBehindItsBack("r", token);
  EXPECT_EQ(ExitCode(*run), kLeaseLost);
  // Not before --kill_after: SIGTERM came first, and was ignored.
  EXPECT_GE(absl::Now() - releasing, absl::Seconds(1));
  EXPECT_TRUE(ProcessGone(pid));
  EXPECT_THAT(ReadFile(log_), HasSubstr("SIGKILL 1s later"));
}

TEST_F(CliRunTest, SignalsSentToRunReachTheCommandThenTheLockIsReleased) {
  struct Case {
    int signal;
    const char* name;
    int code;
  };
  for (const Case& c :
       {Case{SIGTERM, "TERM", 42}, Case{SIGINT, "INT", 43}, Case{SIGHUP, "HUP", 44}}) {
    SCOPED_TRACE(c.name);
    const std::string got = dir_.File(absl::StrCat("got-", c.name));
    unlink(dir_.File("pid").c_str());
    const std::string resource = absl::StrCat("signal-", c.name);
    std::unique_ptr<testing::ChildProcess> run = StartRun(
        {"--resource=" + resource, "--ttl=30s"},
        absl::StrCat(
            "trap 'echo TERM > ", got, "; kill $!; exit 42' TERM; trap 'echo INT > ", got,
            "; kill $!; exit 43' INT; trap 'echo HUP > ", got,
            "; kill $!; exit 44' HUP; echo $$ > ", dir_.File("pid"), "; ", kSleep));
    ASSERT_NE(run, nullptr);
    CommandPid();  // its traps are set
    ASSERT_TRUE(run->Signal(c.signal));
    EXPECT_EQ(ExitCode(*run), c.code);
    EXPECT_EQ(ReadFile(got), c.name);
    ExpectFree(resource);
  }
}

TEST_F(CliRunTest, KilledRunTakesItsCommandWithIt) {
  std::unique_ptr<testing::ChildProcess> run =
      StartRun({"--resource=r"},
               absl::StrCat("echo $$ > ", dir_.File("pid"), "; exec sleep 1000"));
  ASSERT_NE(run, nullptr);
  const pid_t pid = CommandPid();
  ASSERT_FALSE(ProcessGone(pid));
  run->Kill();
  EXPECT_THAT(testing::PollUntil([&] { return ProcessGone(pid); }, kPatience,
                                 "the command's end after run was killed"),
              testing::IsOk());
}

TEST_F(CliRunTest, CommandThatCannotStartExits127AndFreesTheLock) {
  const std::string not_executable = dir_.File("not-executable");
  std::ofstream(not_executable) << "#!/bin/sh\nexit 0\n";
  chmod(not_executable.c_str(), 0644);
  struct Case {
    std::string program;
    std::string why;
  };
  for (const Case& c : {Case{dir_.File("no-such-program"), "No such file or directory"},
                        Case{"fencegate-no-such-command", "not found in $PATH"},
                        Case{not_executable, "Permission denied"}}) {
    SCOPED_TRACE(c.program);
    ASSERT_OK_AND_ASSIGN(testing::ProgramResult result,
                         testing::RunProgram({FENCEGATE_CLI_BIN, "run", "--resource=r",
                                              "--lockservice=" + lockservice_address(),
                                              "--", c.program, "arg"},
                                             kPatience));
    EXPECT_EQ(result.exit_code, kCannotRun) << result.stderr_text;
    EXPECT_THAT(result.stderr_text,
                HasSubstr(absl::StrCat("cannot run '", c.program, "'")));
    EXPECT_THAT(result.stderr_text, HasSubstr(c.why));
    EXPECT_THAT(result.stderr_text, HasSubstr("released the lock"));
    ExpectFree("r");
  }
}

TEST_F(CliRunTest, MissingCommandIsAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--resource=r"},
        std::vector<std::string>{"run", "--resource=r", "--"}}) {
    ASSERT_OK_AND_ASSIGN(testing::ProgramResult result, Cli(args, /*connect=*/false));
    EXPECT_EQ(result.exit_code, kUsage);
    EXPECT_THAT(result.stderr_text, HasSubstr("missing"));
    EXPECT_THAT(result.stderr_text, HasSubstr("COMMAND"));
  }
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult no_resource,
                       Cli({"run", "--", "true"}, /*connect=*/false));
  EXPECT_EQ(no_resource.exit_code, kUsage);
  EXPECT_THAT(no_resource.stderr_text, HasSubstr("missing --resource"));
  // Its stdout is the command's: no --json.
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult json,
                       Cli({"run", "--resource=r", "--json", "--", "true"},
                           /*connect=*/false));
  EXPECT_EQ(json.exit_code, kUsage);
  EXPECT_THAT(json.stderr_text, HasSubstr("unknown flag --json"));
  // The command's own flags are its own, --help included.
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult help,
      Cli({"run", "--resource=r", "--lockservice=" + lockservice_address(), "--", "sh",
           "-c", "echo \"$0 $1\"", "--help", "--json"},
          /*connect=*/false));
  EXPECT_EQ(help.exit_code, 0) << help.stderr_text;
  EXPECT_EQ(help.stdout_text, "--help --json\n");
}

TEST_F(CliRunTest, NestedFencegateGetsTheSignedTokenAndConnectsOverTlsAsRunDid) {
  // Servers of their own, signing tokens, over mutual TLS: a plaintext
  // call, a token without its signature or a call without a client
  // certificate is refused.
  ASSERT_OK_AND_ASSIGN(demo::TestCertificates certs,
                       demo::MakeTestCertificates(dir_.path(), {"alice"}));
  ASSERT_OK_AND_ASSIGN(std::string key, NewKeyLine("k1", /*sign=*/true));
  std::ofstream(dir_.File("keys.txt")) << key << "\n";
  const std::vector<std::string> common = {
      "--signing_keys=" + dir_.File("keys.txt"), "--tls_cert=" + certs.server.cert,
      "--tls_key=" + certs.server.key, "--tls_client_ca=" + certs.server.client_ca};
  std::vector<std::string> lock_args = {"--db=" + dir_.File("tls-locks.db")};
  lock_args.insert(lock_args.end(), common.begin(), common.end());
  std::vector<std::string> gateway_args = {"--db=" + dir_.File("tls-gateway.db")};
  gateway_args.insert(gateway_args.end(), common.begin(), common.end());
  ASSERT_OK_AND_ASSIGN(auto lockservice,
                       testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN, lock_args,
                                                     dir_.path(), "tls-locks"));
  ASSERT_OK_AND_ASSIGN(auto gateway,
                       testing::ServerProcess::Start(FENCEGATE_GATEWAY_BIN, gateway_args,
                                                     dir_.path(), "tls-gateway"));
  const ClientTlsFiles& alice = certs.clients.at("alice");
  // Only run gets addresses and TLS files; the nested write names none.
  const std::string script = absl::StrCat(
      "echo \"$FENCEGATE_TOKEN\" > ", dir_.File("token"), "; ", FENCEGATE_CLI_BIN,
      " write --resource=\"$FENCEGATE_RESOURCE\" --token=\"$FENCEGATE_TOKEN\" "
      "--key=k --value=signed");
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult result,
      testing::RunProgram(
          {FENCEGATE_CLI_BIN, "run", "--resource=secure",
           "--lockservice=" + lockservice->address(), "--gateway=" + gateway->address(),
           "--tls_ca=" + alice.ca, "--tls_cert=" + alice.cert, "--tls_key=" + alice.key,
           "--timeout=10s", "--", "sh", "-c", script},
          kPatience));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
  ASSERT_OK_AND_ASSIGN(client::SignedToken token,
                       client::ParseFencingToken(ReadFile(dir_.File("token"))));
  EXPECT_EQ(token.signature.key_id, "k1");
  client::ClientOptions options;
  options.tls = alice;
  ASSERT_OK_AND_ASSIGN(auto reader,
                       client::GatewayClient::Connect(gateway->address(), options));
  ASSERT_OK_AND_ASSIGN(client::ReadResult read, reader->ReadUnfenced("secure", "k"));
  EXPECT_EQ(read.value, "signed");
  ASSERT_OK_AND_ASSIGN(auto locks,
                       client::LockClient::Connect(lockservice->address(), options));
  ASSERT_OK_AND_ASSIGN(client::LockState state, locks->Describe("secure"));
  EXPECT_FALSE(state.held);
}

TEST_F(CliRunTest, LockServiceRestartKeepsTheLeaseAndTheCommand) {
  // Renewed every 2 s; the lease outlasts a restart of a second or two.
  std::unique_ptr<testing::ChildProcess> run =
      StartRun({"--resource=r", "--ttl=6s"}, RecordingScript("read line; exit 42"),
               /*pipe_stdin=*/true);
  ASSERT_NE(run, nullptr);
  const pid_t pid = CommandPid();
  const uint64_t token = CommandToken();
  const int port = lockservice_->port();
  ASSERT_THAT(lockservice_->Terminate(), testing::IsOk());
  lockservice_.reset();
  ASSERT_OK_AND_ASSIGN(lockservice_,
                       testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                                     {"--db=" + dir_.File("locks.db")},
                                                     dir_.path(), "lockservice", port));
  // The restarted service holds it; a renewal reaches it (the time left
  // goes up again) and the command still runs.
  absl::Duration before = absl::InfiniteDuration();
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    absl::StatusOr<client::LockState> state = lock_->Describe("r");
                    if (!state.ok() || !state->held || state->token != token)
                      return false;
                    const bool renewed =
                        state->remaining > before + absl::Milliseconds(500);
                    before = state->remaining;
                    return renewed;
                  },
                  kPatience, "a renewal after the restart"),
              testing::IsOk());
  EXPECT_FALSE(ProcessGone(pid));
  EXPECT_FALSE(FileExists(dir_.File("term")));
  ASSERT_EQ(write(run->stdin_fd(), "go\n", 3), 3);
  EXPECT_EQ(ExitCode(*run), 42);
  ExpectFree("r");
}

// Leader election with `run --elect` (issue 35): two replicas of a job,
// one leads; the leader freezes past its term, the other takes over with
// a larger term, and the frozen one's late write is refused.
TEST_F(CliRunTest, ElectedReplicasTakeTurnsAndADeposedLeaderIsFenced) {
  // Replica a: records its token and pid, and a TERM (RecordingScript).
  std::unique_ptr<testing::ChildProcess> a =
      StartRun({"--elect=jobs", "--value=10.0.0.1", "--holder=a", "--ttl=2s"},
               RecordingScript(absl::StrCat("echo \"$FENCEGATE_ELECTION\" > ",
                                            dir_.File("election"), "; ", kSleep)));
  ASSERT_NE(a, nullptr);
  const uint64_t term_a = CommandToken();
  AwaitFile(dir_.File("election"));
  EXPECT_EQ(ReadFile(dir_.File("election")), "jobs");
  ASSERT_OK_AND_ASSIGN(client::ElectionState leader, lock_->Leader("jobs"));
  EXPECT_TRUE(leader.leader);
  EXPECT_EQ(leader.term, term_a);
  EXPECT_EQ(leader.value, "10.0.0.1");
  EXPECT_EQ(leader.candidate, "a");

  // Replica b waits in line; once it leads it writes its heartbeat under
  // its term.
  const std::string b_token = dir_.File("b_token");
  std::unique_ptr<testing::ChildProcess> b = StartRun(
      {"--elect=jobs", "--value=10.0.0.2", "--holder=b", "--ttl=30s", "--wait=60s"},
      absl::StrCat("echo \"$FENCEGATE_TOKEN\" > ", b_token, ".tmp; ", FENCEGATE_CLI_BIN,
                   " write --resource=jobs --token=\"$FENCEGATE_TOKEN\" --key=heartbeat "
                   "--value=b || exit 9; mv ",
                   b_token, ".tmp ", b_token, "; ", kSleep));
  ASSERT_NE(b, nullptr);
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    absl::StatusOr<client::LockState> state = lock_->Describe("jobs");
                    return state.ok() && state->waiters == 1;
                  },
                  kPatience, "b in line"),
              testing::IsOk());
  EXPECT_FALSE(FileExists(b_token));

  // a freezes (its run and its command) past its term: b leads.
  ASSERT_TRUE(a->Signal(SIGSTOP));
  const pid_t a_command = CommandPid();
  kill(a_command, SIGSTOP);
  AwaitFile(b_token);
  absl::StatusOr<client::SignedToken> parsed =
      client::ParseFencingToken(ReadFile(b_token));
  ASSERT_THAT(parsed, testing::IsOk());
  const uint64_t term_b = parsed->token;
  EXPECT_GT(term_b, term_a);
  ASSERT_OK_AND_ASSIGN(leader, lock_->Leader("jobs"));
  EXPECT_EQ(leader.term, term_b);
  EXPECT_EQ(leader.candidate, "b");

  // a's late write, with its term, is refused; its proclaim too.
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult late,
                       Cli({"write", "--resource=jobs", absl::StrCat("--token=", term_a),
                            "--key=heartbeat", "--value=a"}));
  EXPECT_EQ(late.exit_code, 2) << late.stdout_text << late.stderr_text;
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult proclaim,
                       Cli({"proclaim", "--election=jobs",
                            absl::StrCat("--token=", term_a), "--value=a"}));
  EXPECT_EQ(proclaim.exit_code, 2) << proclaim.stderr_text;
  ASSERT_OK_AND_ASSIGN(client::ReadResult read,
                       gateway_client_->ReadUnfenced("jobs", "heartbeat"));
  EXPECT_EQ(read.value, "b");

  // a wakes: its run learns the term is over and stops its command.
  kill(a_command, SIGCONT);
  ASSERT_TRUE(a->Signal(SIGCONT));
  EXPECT_EQ(ExitCode(*a), kLeaseLost);
  EXPECT_TRUE(HasLine(dir_.File("term")));

  // b steps down when told to: the election is free again.
  ASSERT_TRUE(b->Signal(SIGTERM));
  EXPECT_EQ(ExitCode(*b), 128 + SIGTERM);
  ASSERT_OK_AND_ASSIGN(leader, lock_->Leader("jobs"));
  EXPECT_FALSE(leader.leader);
}

TEST_F(CliRunTest, ElectionCommandsShowAndChangeTheLeader) {
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult none,
                       Cli({"leader", "--election=jobs", "--json"}));
  ASSERT_EQ(none.exit_code, 0) << none.stderr_text;
  EXPECT_THAT(none.stdout_text, HasSubstr("\"leader\":false"));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<client::Leadership> leading,
                       lock_->Campaign("jobs", "a", "v0"));
  const std::string term = absl::StrCat("--token=", leading->term());
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult said,
                       Cli({"proclaim", "--election=jobs", term, "--value=v1"}));
  ASSERT_EQ(said.exit_code, 0) << said.stderr_text;
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult now, Cli({"leader", "--election=jobs"}));
  EXPECT_THAT(
      now.stdout_text,
      HasSubstr(absl::StrCat("led by a in term ", leading->term(), " (value 'v1', #1)")));
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult observed,
                       Cli({"observe", "--election=jobs", "--count=1", "--json"}));
  EXPECT_THAT(observed.stdout_text, HasSubstr("\"value\":\"v1\""));
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult resigned,
                       Cli({"resign", "--election=jobs", term}));
  ASSERT_EQ(resigned.exit_code, 0) << resigned.stderr_text;
  EXPECT_TRUE(leading->lease().WaitLost(kPatience));  // pushed: the term ended
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult again,
                       Cli({"resign", "--election=jobs", term}));
  EXPECT_EQ(again.exit_code, 2);
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult usage,
                       Cli({"run", "--elect=jobs", "--resource=jobs", "--", "true"}));
  EXPECT_EQ(usage.exit_code, kUsage);
}

}  // namespace
}  // namespace fencegate::e2e
