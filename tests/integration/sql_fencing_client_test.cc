// The client library's RunFenced (fencegate/client/postgres_fence.h) on a
// real PostgreSQL with the SQL fencing API installed by `fencegate
// sql-install`: the errors are the gateway's kind, a serialization failure
// runs the transaction again, and nothing the body wrote survives a refusal.
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/postgres_fence.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/sql_fencing_fixture.h"
#include "harness/log_file.h"
#include "tests/testing/must_run.h"
#include "harness/poll.h"
#include "harness/postgres_server.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate {
namespace {

using client::Fencing;
using client::RunFenced;
using ::testing::HasSubstr;

class RunFencedTest : public testing::SqlSchemaTest {
 protected:
  auto Insert(int id, const std::string& holder) {
    return [id, holder](pqxx::transaction_base& txn) {
      txn.exec_params0("INSERT INTO orders VALUES ($1, $2)", id, holder);
    };
  }
  int Rows() {
    return pqxx::nontransaction(*db_).exec1("SELECT count(*) FROM orders")[0].as<int>();
  }
  int64_t FenceOf(const std::string& resource) {
    return pqxx::nontransaction(*db_)
        .exec_params1("SELECT fencegate_fence_of($1)", resource)[0]
        .as<int64_t>();
  }
};

TEST_F(RunFencedTest, AStaleTokenIsTheGatewaysStaleTokenErrorAndNothingCommits) {
  EXPECT_THAT(RunFenced(*db_, Fencing{"orders/1", 7, {}}, Insert(1, "seven")),
              testing::IsOk());
  const absl::Status stale =
      RunFenced(*db_, Fencing{"orders/1", 6, {}}, Insert(2, "six"));
  EXPECT_TRUE(client::IsStaleToken(stale)) << stale;
  EXPECT_EQ(client::CurrentToken(stale), 7u);
  EXPECT_THAT(stale.message(), HasSubstr("stale fencing token 6"));
  EXPECT_EQ(Rows(), 1);
  EXPECT_EQ(FenceOf("orders/1"), 7);
}

TEST_F(RunFencedTest, BadInputAndAnExceptionFromTheBodyCommitNothing) {
  const absl::Status zero = RunFenced(*db_, Fencing{"orders/1", 0, {}}, Insert(1, "x"));
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument) << zero;
  EXPECT_THAT(zero.message(), HasSubstr("token is 0"));
  EXPECT_THROW((void)RunFenced(*db_, Fencing{"orders/1", 3, {}},
                         [&](pqxx::transaction_base& txn) {
                           Insert(1, "three")(txn);
                           throw std::runtime_error("the body gave up");
                         }),
               std::runtime_error);
  EXPECT_EQ(Rows(), 0);
  EXPECT_EQ(FenceOf("orders/1"), 0);
}

TEST_F(RunFencedTest, SignedTokensPassAndForgedOnesAreTheGatewaysBadSignatureError) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::string line, NewKeyLine("k1", /*sign=*/true));
  ASSERT_TRUE(testing::WriteFileAtomically(dir.File("keys"), line + "\n"));
  testing::MustRun({FENCEGATE_CLI_BIN, "sql-keys", "--postgres=" + uri_,
                    "--signing_keys=" + dir.File("keys")});
  ASSERT_OK_AND_ASSIGN(KeyRing keys, KeyRing::Load(dir.File("keys")));
  ASSERT_OK_AND_ASSIGN(
      TokenSignature signature,
      TokenSigner(keys).Sign("orders/1", 4, fencegate::LeaseMode::kExclusive));
  EXPECT_THAT(RunFenced(*db_, Fencing{"orders/1", 4, signature}, Insert(1, "four")),
              testing::IsOk());
  const absl::Status forged =
      RunFenced(*db_, Fencing{"orders/1", 5, signature}, Insert(2, "five"));
  EXPECT_TRUE(client::IsBadSignature(forged)) << forged;
  const absl::Status unsigned_token =
      RunFenced(*db_, Fencing{"orders/1", 5, {}}, Insert(2, "five"));
  EXPECT_TRUE(client::IsBadSignature(unsigned_token)) << unsigned_token;
  EXPECT_EQ(Rows(), 1);
}

// At REPEATABLE READ, a transaction that waited for another's fence row
// lock fails with 40001 once that one commits a raise; RunFenced runs it
// again, and the second attempt (its token is the fence now: not stale)
// commits.
TEST_F(RunFencedTest, ASerializationFailureRunsTheTransactionAgain) {
  EXPECT_THAT(RunFenced(*db_, Fencing{"orders/1", 4, {}}, [](pqxx::transaction_base&) {}),
              testing::IsOk());
  pqxx::connection other(uri_);
  pqxx::work holding(other);
  holding.exec("SELECT fencegate_fence('orders/1', 5)");  // raises; holds the row lock

  int attempts = 0;
  absl::Status result;
  pqxx::connection mine(uri_);
  const int mine_pid = mine.backendpid();
  std::thread runner([&] {
    result = RunFenced<pqxx::isolation_level::repeatable_read>(
        mine, Fencing{"orders/1", 5, {}}, [&](pqxx::transaction_base& txn) {
          ++attempts;
          txn.exec0("INSERT INTO orders VALUES (1, 'mine')");
        });
  });
  EXPECT_THAT(testing::PollUntil([&] { return testing::WaitingForLock(*db_, mine_pid); },
                                 absl::Seconds(30), "RunFenced to wait for the row lock"),
              testing::IsOk());
  holding.commit();
  runner.join();
  EXPECT_THAT(result, testing::IsOk());
  EXPECT_EQ(attempts, 1);  // the first attempt failed at its fence, before the body
  EXPECT_EQ(Rows(), 1);

  // With one attempt only, the failure is returned: ABORTED, not stale.
  pqxx::work again(other);
  again.exec("SELECT fencegate_fence('orders/1', 6)");
  std::thread once([&] {
    result = RunFenced<pqxx::isolation_level::repeatable_read>(
        mine, Fencing{"orders/1", 6, {}}, [](pqxx::transaction_base&) {},
        /*max_attempts=*/1);
  });
  EXPECT_THAT(testing::PollUntil([&] { return testing::WaitingForLock(*db_, mine_pid); },
                                 absl::Seconds(30), "RunFenced to wait for the row lock"),
              testing::IsOk());
  again.commit();
  once.join();
  EXPECT_EQ(result.code(), absl::StatusCode::kAborted) << result;
  EXPECT_FALSE(client::IsStaleToken(result));
}

}  // namespace
}  // namespace fencegate
