// What the SQL fencing tests share: a schema with the API installed by the
// real CLI and a user table of its own (SqlSchemaTest), the SQLSTATE a piece
// of libpqxx work failed with, and whether a backend waits for a lock.
//
// Thread safety: free functions; a fixture belongs to its test.
#ifndef FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_
#define FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_

#include <exception>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "gtest/gtest.h"
#include "pqxx/connection"
#include "pqxx/except"
#include "pqxx/nontransaction"
#include "tests/testing/must_run.h"
#include "harness/postgres_server.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::testing {

// Installs the SQL fencing API in the schema `uri` selects with `fencegate
// sql-install` (FENCEGATE_CLI_BIN), and creates the table
// orders(id integer PRIMARY KEY, holder text) there: the user's own.
inline void InstallSqlApiAndOrders(const std::string& uri) {
  MustRun({FENCEGATE_CLI_BIN, "sql-install", "--postgres=" + uri});
  pqxx::connection db(uri);
  pqxx::nontransaction(db).exec0(
      "CREATE TABLE orders(id integer PRIMARY KEY, holder text NOT NULL)");
}

// Runs `work`: "" if it returned, the SQLSTATE of the pqxx::sql_error it
// threw (also for the errors libpqxx throws without one: 42501, and
// 40001 and 40P01, which it throws as transaction_rollback), or
// "exception: <what>" for any other exception.
inline std::string SqlStateOf(absl::FunctionRef<void()> work) {
  try {
    work();
    return "";
  } catch (const pqxx::insufficient_privilege&) {
    return "42501";  // libpqxx throws it without its SQLSTATE
  } catch (const pqxx::sql_error& e) {
    return e.sqlstate().empty() ? std::string("no SQLSTATE: ") + e.what() : e.sqlstate();
  } catch (const pqxx::serialization_failure&) {
    return "40001";
  } catch (const pqxx::deadlock_detected&) {
    return "40P01";
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
}

// Whether the backend `pid` waits for a lock now (pg_stat_activity), asked
// on `monitor`, a connection of its own.
inline bool WaitingForLock(pqxx::connection& monitor, int pid) {
  return pqxx::nontransaction(monitor)
      .exec_params1(
          "SELECT coalesce(wait_event_type = 'Lock', false) "
          "FROM pg_stat_activity WHERE pid = $1",
          pid)[0]
      .as<bool>();
}

// A test on a schema of its own of the process's shared PostgreSQL server
// (PostgresServer::Shared()), set up by InstallSqlApiAndOrders(); db_ is a
// connection to it.
class SqlSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(PostgresServer * postgres, PostgresServer::Shared());
    ASSERT_OK_AND_ASSIGN(uri_, postgres->NewSchemaUri());
    InstallSqlApiAndOrders(uri_);
    db_ = std::make_unique<pqxx::connection>(uri_);
  }

  std::string uri_;
  std::unique_ptr<pqxx::connection> db_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_INTEGRATION_SQL_FENCING_FIXTURE_H_
