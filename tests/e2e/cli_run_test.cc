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
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/cli_run_fixture.h"

namespace fencegate::e2e {
namespace {

using ::testing::HasSubstr;

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

TEST_F(CliRunTest, CommandThatCannotStartExits127Or126AsAShellAndFreesTheLock) {
  const std::string not_executable = dir_.File("not-executable");
  std::ofstream(not_executable) << "#!/bin/sh\nexit 0\n";
  chmod(not_executable.c_str(), 0644);
  struct Case {
    std::string program;
    std::string why;
    int exit_code;
  };
  for (const Case& c :
       {Case{dir_.File("no-such-program"), "No such file or directory", kCannotRun},
        Case{"fencegate-no-such-command", "not found in $PATH", kCannotRun},
        Case{not_executable, "Permission denied", kNotExecutable}}) {
    SCOPED_TRACE(c.program);
    ASSERT_OK_AND_ASSIGN(testing::ProgramResult result,
                         testing::RunProgram({FENCEGATE_CLI_BIN, "run", "--resource=r",
                                              "--lockservice=" + lockservice_address(),
                                              "--", c.program, "arg"},
                                             kPatience));
    EXPECT_EQ(result.exit_code, c.exit_code) << result.stderr_text;
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

}  // namespace
}  // namespace fencegate::e2e
