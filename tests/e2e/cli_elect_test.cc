// `fencegate run --elect` and the election commands (leader, observe,
// proclaim, resign) against the real servers, through the CLI as users run
// them (cli_run_fixture.h). Every wait polls under a deadline.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/cli_run_fixture.h"

namespace fencegate::e2e {
namespace {

using ::testing::HasSubstr;

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
