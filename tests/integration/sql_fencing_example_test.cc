// examples/orders (fencegate-orders) against a real lock service and a real
// PostgreSQL: the paused holder's late transaction on the user's own table
// is refused, and the new holder's row stands.
#include <memory>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/must_run.h"
#include "harness/postgres_server.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate {
namespace {

using ::testing::HasSubstr;

class OrdersExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(testing::PostgresServer * postgres,
                         testing::PostgresServer::Shared());
    ASSERT_OK_AND_ASSIGN(uri_, postgres->NewSchemaUri());
    ASSERT_OK_AND_ASSIGN(lockservice_,
                         testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                                       {"--db=" + dir_.File("locks.db")},
                                                       dir_.path(), "lockservice"));
  }

  absl::StatusOr<testing::ProgramResult> RunExample() {
    return testing::RunProgram(
        {FENCEGATE_ORDERS_BIN, "--lockservice=" + lockservice_->address(),
         "--postgres=" + uri_, "--order=7"},
        absl::Minutes(2));
  }

  testing::TempDir dir_;
  std::string uri_;
  std::unique_ptr<testing::ServerProcess> lockservice_;
};

TEST_F(OrdersExampleTest, ThePausedHoldersLateWriteIsRefusedAndTheNewHoldersStands) {
  testing::MustRun({FENCEGATE_CLI_BIN, "sql-install", "--postgres=" + uri_});
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult run, RunExample());
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("A (token 1) shipped order 7"));
  // B's token is larger (the lock service may have used some in between);
  // the refusal names it as the fence.
  std::smatch b;
  ASSERT_TRUE(std::regex_search(run.stdout_text, b,
                                std::regex("B \\(token ([0-9]+)\\) cancelled order 7")))
      << run.stdout_text;
  EXPECT_GT(std::stoull(b[1].str()), 1u);
  EXPECT_THAT(run.stdout_text,
              HasSubstr("A's late write (token 1) was refused: the fence is at token " +
                        b[1].str()));
  EXPECT_THAT(run.stdout_text, HasSubstr("order 7 is cancelled by B"));
}

TEST_F(OrdersExampleTest, WithoutTheSqlApiItSaysWhatToRun) {
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult run, RunExample());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.stderr_text,
              HasSubstr("run `fencegate sql-install --postgres=URI` first"));
}

}  // namespace
}  // namespace fencegate
