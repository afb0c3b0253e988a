// The fencegate CLI as scripts use it: exit codes (exit_codes.h), --json,
// --help, against the real servers.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::testing::HasSubstr;

constexpr int kOk = 0, kAborted = 2, kNotAcquired = 3, kUsage = 4, kUnavailable = 5;

// A loopback port nobody listens on (bound, then closed).
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class CliTest : public E2eTest {
 protected:
  // Runs the CLI; returns its exit code, keeping its output in last_.
  int Run(std::vector<std::string> args, bool connect = true) {
    absl::StatusOr<testing::ProgramResult> result = Cli(std::move(args), connect);
    EXPECT_TRUE(result.ok()) << result.status();
    last_ = result.ok() ? *result : testing::ProgramResult{};
    return last_.exit_code;
  }
  std::string Output() const { return last_.stdout_text + last_.stderr_text; }

  testing::ProgramResult last_;
};

TEST_F(CliTest, ExitCodesForOkStaleNotAcquiredAndLeaseLost) {
  ASSERT_EQ(Run({"acquire", "--resource=r", "--holder=a", "--ttl=60s", "--json"}), kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"ok\":true"));
  const uint64_t t1 = JsonUint(last_.stdout_text, "token");
  ASSERT_GT(t1, 0u);
  EXPECT_EQ(Run({"write", "--resource=r", absl::StrCat("--token=", t1), "--key=k",
                 "--value=one"}),
            kOk)
      << Output();

  // Held by someone else: not acquired, and the holder's token is given.
  EXPECT_EQ(Run({"acquire", "--resource=r", "--holder=b", "--json"}), kNotAcquired)
      << Output();
  EXPECT_EQ(JsonUint(last_.stdout_text, "current_token"), t1);

  // a lets go; b takes over and fences.
  ASSERT_EQ(Run({"release", "--resource=r", absl::StrCat("--token=", t1)}), kOk);
  ASSERT_EQ(Run({"acquire", "--resource=r", "--holder=b", "--ttl=60s", "--json"}), kOk);
  const uint64_t t2 = JsonUint(last_.stdout_text, "token");
  ASSERT_EQ(Run({"fence", "--resource=r", absl::StrCat("--token=", t2)}), kOk)
      << Output();

  // The old token: stale at the gateway, lost at the lock service.
  EXPECT_EQ(Run({"write", "--resource=r", absl::StrCat("--token=", t1), "--key=k",
                 "--value=late", "--json"}),
            kAborted)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"reason\":\"stale_token\""));
  EXPECT_EQ(JsonUint(last_.stdout_text, "current_token"), t2);
  EXPECT_EQ(Run({"read", "--resource=r", "--key=k", absl::StrCat("--token=", t1)}),
            kAborted);
  EXPECT_EQ(Run({"renew", "--resource=r", absl::StrCat("--token=", t1)}), kAborted);
  EXPECT_THAT(last_.stderr_text, HasSubstr("refused"));
  EXPECT_EQ(Run({"release", "--resource=r", absl::StrCat("--token=", t1)}), kAborted);

  // A compare-and-set that does not match is refused the same way.
  EXPECT_EQ(Run({"write", "--resource=r", absl::StrCat("--token=", t2), "--key=k",
                 "--value=x", "--expected_version=999"}),
            kAborted);
  // The late write changed nothing.
  ASSERT_EQ(Run({"read", "--resource=r", "--key=k", "--json"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"value\":\"one\""));
  EXPECT_EQ(Run({"release", "--resource=r", absl::StrCat("--token=", t2)}), kOk);
}

TEST_F(CliTest, ExitCodesForUsageErrors) {
  EXPECT_EQ(Run({"acquire"}), kUsage);  // --resource missing
  EXPECT_THAT(last_.stderr_text, HasSubstr("missing --resource"));
  EXPECT_EQ(Run({"frobnicate"}, /*connect=*/false), kUsage);
  EXPECT_EQ(Run({}, /*connect=*/false), kUsage);
  EXPECT_EQ(Run({"acquire", "--resource=r", "--key=k"}), kUsage);  // not its flag
  EXPECT_THAT(last_.stderr_text, HasSubstr("unknown flag --key"));
  EXPECT_EQ(Run({"write", "--resource=r", "--token=abc", "--key=k", "--value=v"}),
            kUsage);
  EXPECT_EQ(Run({"write", "--resource=r", "--token=0", "--key=k", "--value=v"}), kUsage);
  EXPECT_EQ(Run({"write", "--resource=r", "--token=1", "--key=k"}), kUsage);  // no value
  EXPECT_EQ(Run({"read", "--resource=r", "--key=k", "stray"}), kUsage);
  // Refused by the server as INVALID_ARGUMENT: below its minimum TTL.
  EXPECT_EQ(Run({"acquire", "--resource=r", "--ttl=1ms", "--json"}), kUsage);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"code\":\"INVALID_ARGUMENT\""));
}

TEST_F(CliTest, AcquireOfSeveralResourcesPrintsATokenEachOrNamesTheBusyOne) {
  ASSERT_EQ(Run({"acquire", "--resources=a,b,c", "--holder=x", "--ttl=60s", "--json"}),
            kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"leases\":["));
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"resource\":\"c\""));
  // The holder again: reentrant, the same tokens.
  ASSERT_EQ(Run({"acquire", "--resources=a,b", "--holder=x"}), kOk) << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("acquired 'b' (exclusive): token"));
  ASSERT_EQ(Run({"acquire", "--resources=d,c", "--holder=z", "--json"}), kNotAcquired)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("'c' is held"));
  EXPECT_EQ(Run({"describe", "--resource=d", "--json"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"held\":false"));
  EXPECT_EQ(Run({"acquire", "--resource=e", "--resources=f,g"}), kUsage);
  EXPECT_EQ(Run({"acquire", "--resources=f,g", "--permits=2"}), kUsage);
}

TEST_F(CliTest, ExitCodeForUnreachableServer) {
  const std::string nowhere = absl::StrCat("127.0.0.1:", UnusedPort());
  // --timeout bounds the whole call, retries of the unreachable server
  // included (the fixture's 10 s would only make the test slower).
  EXPECT_EQ(Run({"describe", "--resource=r", "--lockservice=" + nowhere, "--timeout=1s"},
                /*connect=*/false),
            kUnavailable);
  EXPECT_THAT(last_.stderr_text, HasSubstr("--lockservice=HOST:PORT"));
  EXPECT_THAT(last_.stderr_text, HasSubstr("gave up after"));
  EXPECT_EQ(Run({"list", "--resource=r", "--gateway=" + nowhere, "--timeout=1s"},
                /*connect=*/false),
            kUnavailable);
}

TEST_F(CliTest, EnvironmentStandsForTheConnectionFlagsNotGiven) {
  auto run = [&](std::vector<std::string> args, const std::string& lockservice) {
    testing::ChildProcess::Options options;
    options.argv = {FENCEGATE_CLI_BIN};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.env = {"FENCEGATE_LOCKSERVICE=" + lockservice};
    absl::StatusOr<testing::ProgramResult> result =
        testing::RunProgram(options, absl::Seconds(60));
    EXPECT_TRUE(result.ok()) << result.status();
    last_ = result.ok() ? *result : testing::ProgramResult{};
    return last_.exit_code;
  };
  EXPECT_EQ(run({"describe", "--resource=r"}, lockservice_address()), kOk) << Output();
  // A flag given wins over the variable.
  const std::string nowhere = absl::StrCat("127.0.0.1:", UnusedPort());
  EXPECT_EQ(run({"describe", "--resource=r", "--lockservice=" + lockservice_address()},
                nowhere),
            kOk)
      << Output();
  EXPECT_EQ(run({"describe", "--resource=r", "--timeout=1s"}, nowhere), kUnavailable);
  EXPECT_THAT(last_.stderr_text, HasSubstr(nowhere));
}

TEST_F(CliTest, HelpForEveryCommand) {
  EXPECT_EQ(Run({"help"}, /*connect=*/false), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("Exit codes:"));
  for (const char* command : {"acquire", "renew", "release", "describe", "run", "write",
                              "read", "fence", "list"}) {
    EXPECT_EQ(Run({"help", command}, /*connect=*/false), kOk) << command;
    EXPECT_THAT(last_.stdout_text, HasSubstr(absl::StrCat("fencegate ", command)));
    EXPECT_EQ(Run({command, "--help"}), kOk) << command;
    EXPECT_THAT(last_.stdout_text, HasSubstr("Flags:"));
  }
}

TEST_F(CliTest, WriteReadListDescribeRoundTrip) {
  ASSERT_EQ(Run({"acquire", "--resource=docs", "--json"}), kOk) << Output();
  const std::string token =
      absl::StrCat("--token=", JsonUint(last_.stdout_text, "token"));
  ASSERT_EQ(
      Run({"write", "--resource=docs", token, "--key=a", "--value=hello", "--json"}), kOk)
      << Output();
  const uint64_t version = JsonUint(last_.stdout_text, "version");
  EXPECT_EQ(Run({"write", "--resource=docs", token, "--key=a", "--value=again",
                 absl::StrCat("--expected_version=", version)}),
            kOk)
      << Output();
  ASSERT_EQ(Run({"read", "--resource=docs", "--key=a", token}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"again\""));
  ASSERT_EQ(Run({"list", "--resource=docs", "--json"}), kOk);
  EXPECT_EQ(JsonUint(last_.stdout_text, "key_count"), 1u);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"key\":\"a\""));
  ASSERT_EQ(Run({"describe", "--resource=docs", "--json"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"held\":true"));
  EXPECT_EQ(Run({"write", "--resource=docs", token, "--key=a", "--delete"}), kOk);
  ASSERT_EQ(Run({"read", "--resource=docs", "--key=a", "--json"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"found\":false"));
}

TEST_F(CliTest, SharedLeasesAndPermitsSayTheirKind) {
  ASSERT_EQ(Run({"acquire", "--resource=doc", "--holder=r1", "--shared", "--json"}), kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"mode\":\"shared\""));
  const uint64_t r1 = JsonUint(last_.stdout_text, "token");
  ASSERT_EQ(Run({"acquire", "--resource=doc", "--holder=r2", "--shared"}), kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("acquired 'doc' (shared): token"));
  EXPECT_THAT(last_.stdout_text, HasSubstr("to read (fenced), renew and release"));
  // Not for a writer while they hold it.
  EXPECT_EQ(Run({"acquire", "--resource=doc", "--holder=w"}), kNotAcquired) << Output();
  ASSERT_EQ(Run({"describe", "--resource=doc", "--json"}), kOk) << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"mode\":\"shared\""));
  EXPECT_EQ(JsonUint(last_.stdout_text, "holders"), 2u);
  EXPECT_EQ(JsonUint(last_.stdout_text, "token"), r1);  // the oldest
  ASSERT_EQ(Run({"describe", "--resource=doc"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("held shared by 2 holders; the oldest is r1"));

  ASSERT_EQ(Run({"acquire", "--resource=pool", "--permits=2", "--json"}), kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"mode\":\"permit\""));
  EXPECT_EQ(JsonUint(last_.stdout_text, "permits"), 2u);
  ASSERT_EQ(Run({"acquire", "--resource=pool", "--holder=other", "--permits=2"}), kOk)
      << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("acquired 'pool' (a permit of 2): token"));
  EXPECT_EQ(Run({"acquire", "--resource=pool", "--holder=third", "--permits=2"}),
            kNotAcquired)
      << Output();
  // Another size while in use: the lock service refuses it, naming permits.
  EXPECT_EQ(Run({"acquire", "--resource=pool", "--permits=3", "--json"}), kUsage);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"code\":\"INVALID_ARGUMENT\""));
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"field\":\"permits\""));
  ASSERT_EQ(Run({"describe", "--resource=pool"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("2 of its 2 permits held"));

  ASSERT_EQ(Run({"acquire", "--resource=solo", "--json"}), kOk) << Output();
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"mode\":\"exclusive\""));
}

TEST_F(CliTest, SharedWithPermitsOrZeroPermitsIsAUsageError) {
  EXPECT_EQ(Run({"acquire", "--resource=r", "--shared", "--permits=2"}), kUsage);
  EXPECT_THAT(last_.stderr_text, HasSubstr("--shared and --permits"));
  EXPECT_EQ(Run({"acquire", "--resource=r", "--permits=0"}), kUsage);
  EXPECT_THAT(last_.stderr_text, HasSubstr("--permits must be at least 1"));
  EXPECT_EQ(Run({"describe", "--resource=r", "--shared"}), kUsage);  // not its flag
  ASSERT_EQ(Run({"describe", "--resource=r", "--json"}), kOk);
  EXPECT_THAT(last_.stdout_text, HasSubstr("\"held\":false"));  // nothing was sent
}

}  // namespace
}  // namespace fencegate::e2e
