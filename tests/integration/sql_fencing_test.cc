// The SQL fencing API (gateway/postgres/sql/fencegate_sql_api.sql) on a real
// PostgreSQL: installed by the real `fencegate sql-install`, used from a
// user's own table, shared with a real fencegate-gateway on the same
// schema, with signed tokens loaded by `fencegate sql-keys`. The races at
// every statement boundary are sql_fencing_race_test.cc's.
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/integration/gateway_postgres_fixture.h"
#include "tests/integration/sql_fencing_fixture.h"
#include "harness/log_file.h"
#include "tests/testing/must_run.h"
#include "harness/poll.h"
#include "harness/run_program.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::testing::HasSubstr;

class SqlFencingTest : public GatewaysOnPostgresTest {
 protected:
  void SetUp() override {
    GatewaysOnPostgresTest::SetUp();
    if (HasFatalFailure()) return;
    testing::InstallSqlApiAndOrders(uri_);
    db_ = std::make_unique<pqxx::connection>(uri_);
  }

  // Runs `sql` in a transaction of its own that first fences `resource`
  // with `token`; the SQLSTATE it failed with, or "" if it committed.
  std::string FencedTransaction(const std::string& resource, int64_t token,
                                const std::string& sql) {
    return testing::SqlStateOf([&] {
      pqxx::work txn(*db_);
      txn.exec_params1("SELECT fencegate_fence($1, $2)", resource, token);
      txn.exec(sql);
      txn.commit();
    });
  }

  int64_t FenceOf(const std::string& resource) {
    return pqxx::nontransaction(*db_)
        .exec_params1("SELECT fencegate_fence_of($1)", resource)[0]
        .as<int64_t>();
  }

  std::unique_ptr<pqxx::connection> db_;
};

TEST_F(SqlFencingTest, InstallIsIdempotentAndTheGatewayRunsOnTheSameSchema) {
  const testing::ProgramResult again = testing::MustRun(
      {FENCEGATE_CLI_BIN, "sql-install", "--postgres=" + uri_, "--json"});
  EXPECT_THAT(again.stdout_text, HasSubstr("\"ok\":true,\"version\":1"));
  EXPECT_EQ(
      pqxx::nontransaction(*db_).exec1("SELECT fencegate_sql_api_version()")[0].as<int>(),
      1);
  StartGateway(0);
  auto stub = StubOf(0);
  ASSERT_OK_AND_ASSIGN(auto written, Put(*stub, "orders/1", 3, "k", "v"));
  EXPECT_EQ(FenceOf("orders/1"), 3);
}

// The CLI's bad input: a clear error naming the flag, usage's exit code 4,
// and nothing installed or loaded.
TEST_F(SqlFencingTest, TheSqlCommandsRefuseBadFlagsNamingThem) {
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult bad_uri,
      testing::RunProgram({FENCEGATE_CLI_BIN, "sql-install", "--postgres=mysql://db/app"},
                          absl::Minutes(1)));
  EXPECT_EQ(bad_uri.exit_code, 4);
  EXPECT_THAT(bad_uri.stderr_text, HasSubstr("--postgres"));
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult missing,
      testing::RunProgram({FENCEGATE_CLI_BIN, "sql-install"}, absl::Minutes(1)));
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_THAT(missing.stderr_text, HasSubstr("missing --postgres"));
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult no_keys,
      testing::RunProgram({FENCEGATE_CLI_BIN, "sql-keys", "--postgres=" + uri_,
                           "--signing_keys=" + dir_.File("no-such-file")},
                          absl::Minutes(1)));
  EXPECT_EQ(no_keys.exit_code, 4);
  EXPECT_THAT(no_keys.stderr_text, HasSubstr("--signing_keys"));
  EXPECT_EQ(pqxx::nontransaction(*db_)
                .exec1("SELECT count(*) FROM fencegate_keys")[0]
                .as<int>(),
            0);
}

// Kleppmann's scenario on a table of the user's own: holder 1 pauses past
// its lease, holder 2 (token 2) writes, holder 1 wakes and writes with
// token 1: its transaction is refused and rolled back, holder 2's row
// stands.
TEST_F(SqlFencingTest, APausedHoldersTransactionIsRefusedAndTheNewHoldersRowStands) {
  EXPECT_EQ(
      FencedTransaction("orders/42", 1, "INSERT INTO orders VALUES (42, 'holder-1')"),
      "");
  EXPECT_EQ(FencedTransaction("orders/42", 2,
                              "UPDATE orders SET holder = 'holder-2' WHERE id = 42"),
            "");
  try {
    pqxx::work txn(*db_);
    txn.exec_params1("SELECT fencegate_fence($1, $2)", "orders/42", 1);
    txn.exec0("UPDATE orders SET holder = 'holder-1 again' WHERE id = 42");
    txn.commit();
    ADD_FAILURE() << "the paused holder's transaction committed";
  } catch (const pqxx::sql_error& e) {
    EXPECT_EQ(e.sqlstate(), "ZF001");
    EXPECT_THAT(e.what(), HasSubstr("stale fencing token 1 for resource 'orders/42'"));
  }
  EXPECT_EQ(pqxx::nontransaction(*db_)
                .exec1("SELECT holder FROM orders WHERE id = 42")[0]
                .as<std::string>(),
            "holder-2");
  EXPECT_EQ(FenceOf("orders/42"), 2);
}

TEST_F(SqlFencingTest, TheStaleTokenErrorCarriesTheFenceInItsDetail) {
  EXPECT_EQ(FencedTransaction("r", 9, "SELECT 1"), "");
  pqxx::work txn(*db_);
  const pqxx::row detail = txn.exec1(R"sql(
    DO $$ BEGIN PERFORM fencegate_fence('r', 4);
    EXCEPTION WHEN SQLSTATE 'ZF001' THEN
      DECLARE d text; BEGIN
        GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
        PERFORM set_config('fencegate.test_detail', d, true);
      END;
    END $$;
    SELECT current_setting('fencegate.test_detail'))sql");
  EXPECT_EQ(detail[0].as<std::string>(), "current_token=9");
}

TEST_F(SqlFencingTest, ATransactionThatFencesAndAbortsLeavesTheFenceWhereItWas) {
  EXPECT_EQ(FencedTransaction("r", 5, "SELECT 1"), "");
  {
    pqxx::work txn(*db_);
    txn.exec_params1("SELECT fencegate_fence($1, $2)", "r", 8);
    txn.abort();
  }
  EXPECT_EQ(FenceOf("r"), 5);
  EXPECT_EQ(FencedTransaction("r", 6, "SELECT 1"), "");  // 8 was never seen
}

// One fence for both paths, in both directions.
// The fence holder's own transactions (token = fence) share the row lock:
// they run side by side, and a newer holder's fence waits for all of them,
// then shuts out the next one.
TEST_F(SqlFencingTest,
       TheFenceHoldersTransactionsRunSideBySideAndANewerHolderWaitsForAll) {
  EXPECT_EQ(FencedTransaction("r", 5, "SELECT 1"), "");
  pqxx::connection c1(uri_), c2(uri_), c3(uri_);
  pqxx::work t1(c1), t2(c2);
  t1.exec("SELECT fencegate_fence('r', 5)");
  t2.exec("SELECT fencegate_fence('r', 5)");  // would wait here if t1 held it alone
  t1.exec0("INSERT INTO orders VALUES (1, 'five-a')");
  t2.exec0("INSERT INTO orders VALUES (2, 'five-b')");
  std::string newer;
  std::thread fencer([&] {
    newer = testing::SqlStateOf([&] {
      pqxx::work t3(c3);
      t3.exec("SELECT fencegate_fence('r', 6)");
      t3.exec0("INSERT INTO orders VALUES (3, 'six')");
      t3.commit();
    });
  });
  const int pid = c3.backendpid();
  auto waiting = [&] { return testing::WaitingForLock(*db_, pid); };
  EXPECT_THAT(testing::PollUntil(waiting, absl::Seconds(30), "the newer fence to wait"),
              testing::IsOk());
  t1.commit();
  EXPECT_TRUE(waiting()) << "the newer holder went on while t2 was open";
  t2.commit();
  fencer.join();
  EXPECT_EQ(newer, "");
  EXPECT_EQ(FencedTransaction("r", 5, "INSERT INTO orders VALUES (4, 'late')"), "ZF001");
  EXPECT_EQ(pqxx::nontransaction(*db_).exec1("SELECT count(*) FROM orders")[0].as<int>(),
            3);
}

TEST_F(SqlFencingTest, TheGatewayAndSqlShareOneFence) {
  StartGateway(0);
  auto stub = StubOf(0);
  ASSERT_OK_AND_ASSIGN(auto written, Put(*stub, "shared", 2, "k", "v"));
  EXPECT_EQ(FencedTransaction("shared", 1, "INSERT INTO orders VALUES (1, 'stale')"),
            "ZF001");
  EXPECT_EQ(FencedTransaction("shared", 5, "INSERT INTO orders VALUES (2, 'new')"), "");
  absl::StatusOr<v1::WriteResponse> stale = Put(*stub, "shared", 3, "k", "stale");
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted) << stale.status();
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub, "shared", "k"));
  EXPECT_EQ(read.value(), "v");
  EXPECT_EQ(pqxx::nontransaction(*db_).exec1("SELECT count(*) FROM orders")[0].as<int>(),
            1);
}

// Grant-time fencing (the gateway's --lockservice feed) raises the same
// fence rows: once a newer lease is granted, SQL refuses the older token
// although nobody has written with the newer one.
TEST_F(SqlFencingTest, GrantTimeFencingRaisesTheFenceSqlChecks) {
  ASSERT_OK_AND_ASSIGN(auto lockservice,
                       testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                                     {"--db=" + dir_.File("locks.db")},
                                                     dir_.path(), "lockservice"));
  StartGateway(0, "", {"--lockservice=" + lockservice->address()});
  ASSERT_OK_AND_ASSIGN(auto locks, client::LockClient::Connect(lockservice->address()));
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome a, locks->Acquire("orders/9", "holder-a"));
  ASSERT_TRUE(a.acquired);
  ASSERT_OK_AND_ASSIGN(uint32_t holds, locks->Release("orders/9", a.token));
  EXPECT_EQ(holds, 0u);
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome b, locks->Acquire("orders/9", "holder-b"));
  ASSERT_TRUE(b.acquired);
  EXPECT_THAT(testing::PollUntil(
                  [&] { return FenceOf("orders/9") >= static_cast<int64_t>(b.token); },
                  absl::Seconds(30), "the gateway's feed to raise the fence"),
              testing::IsOk());
  EXPECT_EQ(FencedTransaction("orders/9", static_cast<int64_t>(a.token),
                              "INSERT INTO orders VALUES (9, 'a, late')"),
            "ZF001");
  EXPECT_EQ(FencedTransaction("orders/9", static_cast<int64_t>(b.token),
                              "INSERT INTO orders VALUES (9, 'b')"),
            "");
}

// A fenced read: fencegate_check refuses a stale token, changes nothing, and
// under REPEATABLE READ sees the same snapshot as the reads after it.
TEST_F(SqlFencingTest, FencegateCheckRefusesAStaleReaderAndChangesNothing) {
  EXPECT_EQ(FencedTransaction("r", 4, "INSERT INTO orders VALUES (1, 'four')"), "");
  {
    pqxx::transaction<pqxx::isolation_level::repeatable_read> txn(*db_);
    EXPECT_EQ(txn.exec_params1("SELECT fencegate_check($1, $2)", "r", 4)[0].as<int64_t>(),
              4);
    EXPECT_EQ(txn.exec_params1("SELECT fencegate_check($1, $2)", "r", 7)[0].as<int64_t>(),
              4);
  }
  EXPECT_EQ(FenceOf("r"), 4);  // a check raises nothing
  EXPECT_EQ(testing::SqlStateOf([&] {
              pqxx::read_transaction txn(*db_);
              txn.exec_params1("SELECT fencegate_check($1, $2)", "r", 3);
            }),
            "ZF001");
  EXPECT_EQ(FenceOf("never-fenced"), 0);
}

// Bad input: a clear error naming the argument and its limit, and nothing
// changes.
TEST_F(SqlFencingTest, BadArgumentsAreRefusedWithAClearErrorAndChangeNothing) {
  EXPECT_EQ(FencedTransaction("r", 3, "SELECT 1"), "");
  struct Case {
    std::string call;
    std::string sqlstate;
    std::string says;
  };
  const std::string long_name(257, 'x');
  for (const Case& c : std::vector<Case>{
           {"fencegate_fence('r', NULL)", "22004", "token is NULL"},
           {"fencegate_fence(NULL, 5)", "22004", "resource is NULL"},
           {"fencegate_fence('r', -5)", "22023", "token is -5; tokens start at 1"},
           {"fencegate_fence('r', 0)", "22023", "token is 0; tokens start at 1"},
           {"fencegate_fence('', 5)", "22023",
            "resource is 0 bytes; it must be 1 to 256"},
           {"fencegate_fence('" + long_name + "', 5)", "22023",
            "resource is 257 bytes; it must be 1 to 256"},
           {"fencegate_check('r', 0)", "22023", "token is 0"},
       }) {
    SCOPED_TRACE(c.call);
    try {
      pqxx::work txn(*db_);
      txn.exec("SELECT 1");  // fencegate_fence is not the first statement
      txn.exec("SELECT " + c.call);
      txn.commit();
      ADD_FAILURE() << "accepted";
    } catch (const pqxx::sql_error& e) {
      EXPECT_EQ(e.sqlstate(), c.sqlstate);
      EXPECT_THAT(e.what(), HasSubstr(c.says));
    }
  }
  EXPECT_EQ(FenceOf("r"), 3);
}

// Outside a transaction block the fence would be raised and committed at
// once, fencing nothing: refused (at its commit, which rolls back), by the
// extended protocol (parameters) and the simple one alike, and the fence
// stays. The fence holder's token again changes nothing and is let through:
// its first fence, which raised the fence, was the one checked.
TEST_F(SqlFencingTest, FencegateFenceOutsideATransactionBlockIsRefused) {
  EXPECT_EQ(FencedTransaction("r", 3, "SELECT 1"), "");
  auto autocommit = [&](const std::string& sql) {
    return testing::SqlStateOf([&] { pqxx::nontransaction(*db_).exec(sql); });
  };
  EXPECT_EQ(testing::SqlStateOf([&] {
              pqxx::nontransaction(*db_).exec_params1("SELECT fencegate_fence($1, $2)",
                                                      "r", 9);
            }),
            "25P01");
  EXPECT_EQ(autocommit("SELECT fencegate_fence('r', 9)"), "25P01");
  EXPECT_EQ(autocommit("SELECT fencegate_fence('r', 3)"), "");
  EXPECT_EQ(FenceOf("r"), 3);
  // Its commit in the same query string is refused the same way.
  EXPECT_EQ(autocommit("BEGIN; SELECT fencegate_fence('r', 9); COMMIT"), "25P01");
  EXPECT_EQ(FenceOf("r"), 3);
}

// With keys loaded by `fencegate sql-keys`: the lock service's signatures
// (TokenSigner) verify in SQL, and everything else is refused.
TEST_F(SqlFencingTest, WithKeysLoadedOnlyTokensSignedByTheLockServicePass) {
  const std::string key_file = dir_.File("keys.txt");
  ASSERT_OK_AND_ASSIGN(std::string line_a, NewKeyLine("ka", /*sign=*/true));
  ASSERT_OK_AND_ASSIGN(std::string line_b, NewKeyLine("kb", /*sign=*/false));
  ASSERT_TRUE(testing::WriteFileAtomically(key_file, line_a + "\n" + line_b + "\n"));
  const std::string other_file = dir_.File("other.txt");
  ASSERT_OK_AND_ASSIGN(std::string line_x, NewKeyLine("ka", /*sign=*/true));
  ASSERT_TRUE(testing::WriteFileAtomically(other_file, line_x + "\n"));
  testing::MustRun({FENCEGATE_CLI_BIN, "sql-keys", "--postgres=" + uri_,
                    "--signing_keys=" + key_file});
  ASSERT_OK_AND_ASSIGN(KeyRing keys, KeyRing::Load(key_file));
  ASSERT_OK_AND_ASSIGN(KeyRing other, KeyRing::Load(other_file));
  const TokenSigner signer(keys);
  const TokenSigner forger(other);  // the same key id, another secret

  auto fence = [&](const std::string& resource, int64_t token,
                   const std::optional<TokenSignature>& signature) {
    return testing::SqlStateOf([&] {
      pqxx::work txn(*db_);
      txn.exec("SELECT 1");
      if (signature) {
        txn.exec_params1(
            "SELECT fencegate_fence($1, $2, $3, $4)", resource, token, signature->key_id,
            pqxx::binarystring(signature->mac.data(), signature->mac.size()));
      } else {
        txn.exec_params1("SELECT fencegate_fence($1, $2)", resource, token);
      }
      txn.commit();
    });
  };
  ASSERT_OK_AND_ASSIGN(TokenSignature good,
                       signer.Sign("orders/7", 5, fencegate::LeaseMode::kExclusive));
  EXPECT_EQ(fence("orders/7", 5, good), "");
  EXPECT_EQ(FenceOf("orders/7"), 5);

  ASSERT_OK_AND_ASSIGN(TokenSignature forged,
                       forger.Sign("orders/7", 99, fencegate::LeaseMode::kExclusive));
  EXPECT_EQ(fence("orders/7", 99, forged), "ZF002");
  EXPECT_EQ(fence("orders/7", 99, std::nullopt), "ZF002");  // unsigned
  EXPECT_EQ(fence("orders/7", 99, good), "ZF002");          // token 5's signature
  EXPECT_EQ(fence("orders/8", 5, good), "ZF002");           // another resource's
  TokenSignature unknown = good;
  unknown.key_id = "kz";
  EXPECT_EQ(fence("orders/7", 5, unknown), "ZF002");
  EXPECT_EQ(FenceOf("orders/7"), 5);  // nothing raised it

  // A key that is not the signing one still verifies (rotation).
  const KeyRing only_b = *KeyRing::Parse(line_b + " sign\n", "b");
  ASSERT_OK_AND_ASSIGN(
      TokenSignature by_b,
      TokenSigner(only_b).Sign("orders/7", 6, fencegate::LeaseMode::kExclusive));
  EXPECT_EQ(fence("orders/7", 6, by_b), "");

  // An application's role (one that did not install the API) may fence
  // with a signed token, but can neither read the keys nor set a fence by
  // hand. Each attempt runs in a transaction that creates the role and is
  // rolled back.
  ASSERT_OK_AND_ASSIGN(TokenSignature seven,
                       signer.Sign("orders/7", 7, fencegate::LeaseMode::kExclusive));
  auto as_app = [&](const std::function<void(pqxx::work&)>& then) {
    return testing::SqlStateOf([&] {
      pqxx::work txn(*db_);
      const std::string role = txn.quote_name(
          "app_" + txn.exec1("SELECT current_schema()")[0].as<std::string>());
      txn.exec0("CREATE ROLE " + role);
      txn.exec0(
          "GRANT USAGE ON SCHEMA " +
          txn.quote_name(txn.exec1("SELECT current_schema()")[0].as<std::string>()) +
          " TO " + role);
      txn.exec0("SET LOCAL ROLE " + role);
      then(txn);
      txn.abort();
    });
  };
  EXPECT_EQ(as_app([&](pqxx::work& txn) {
              txn.exec_params1("SELECT fencegate_fence($1, $2, $3, $4)", "orders/7", 7,
                               seven.key_id,
                               pqxx::binarystring(seven.mac.data(), seven.mac.size()));
            }),
            "");
  EXPECT_EQ(as_app([](pqxx::work& txn) { txn.exec("SELECT * FROM fencegate_keys"); }),
            "42501");
  EXPECT_EQ(as_app([](pqxx::work& txn) {
              txn.exec("UPDATE fencegate_resources SET max_token = 1000000");
            }),
            "42501");
  EXPECT_EQ(FenceOf("orders/7"), 6);
}

}  // namespace
}  // namespace fencegate
