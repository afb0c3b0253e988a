// GatewayStoreTest on PostgreSQL, for the tests only PostgreSQL has: more
// gateways on the test's schema (more backends, more FencedStores), and SQL
// to look at or steer the server (pg_stat_activity, triggers). Waiting for
// the server to reach a state polls under a deadline; nothing sleeps to
// "wait for things".
#ifndef FENCEGATE_TESTS_UNIT_GATEWAY_POSTGRES_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_GATEWAY_POSTGRES_FIXTURE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gateway/fenced_store.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_storage.h"
#include "gtest/gtest.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "harness/postgres_server.h"
#include "tests/unit/gateway_store_fixture.h"

namespace fencegate::gateway {

// A session of a gateway waiting for a row lock another transaction holds.
inline constexpr char kSessionWaitingForALock[] =
    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND application_name = 'fencegate-gateway'";

// The first column of the first row `sql` returns on a connection of its own
// ("" when no row or NULL; the error's text when it fails).
inline std::string QueryValue(const std::string& uri, const std::string& sql) {
  try {
    pqxx::connection connection(uri);
    pqxx::nontransaction txn(connection);
    const pqxx::result rows = txn.exec(sql);
    return rows.empty() || rows[0][0].is_null() ? "" : rows[0][0].c_str();
  } catch (const std::exception& e) {
    return absl::StrCat("error: ", e.what());
  }
}

// A write of `value` to key "k" of `resource`.
inline FencedOp WriteOp(absl::string_view resource, uint64_t token,
                        absl::string_view value) {
  FencedOp op;
  op.kind = OpKind::kWrite;
  op.resource = resource;
  op.token = token;
  Mutation& m = op.mutations.emplace_back();
  m.key = "k";
  m.kind = Mutation::Kind::kPut;
  m.value = value;
  return op;
}

class PostgresStoreTest : public GatewayStoreTest {
 protected:
  PostgresStoreTest() : GatewayStoreTest(BackendKind::kPostgres) {}

  // Another gateway on the same schema.
  struct Gateway {
    std::unique_ptr<StorageBackend> storage;
    std::unique_ptr<FencedStore> store;
  };

  // The test's schema.
  std::string uri() const { return backend_->postgres_uri(); }

  // Another backend on the test's schema (null, with a test failure, if it
  // cannot open).
  std::unique_ptr<StorageBackend> OpenBackend() {
    absl::StatusOr<std::unique_ptr<StorageBackend>> storage = backend_->Open();
    EXPECT_TRUE(storage.ok()) << storage.status();
    return storage.ok() ? *std::move(storage) : nullptr;
  }
  Gateway OpenGateway() {
    Gateway gateway;
    gateway.storage = OpenBackend();
    if (gateway.storage != nullptr) {
      gateway.store = std::make_unique<FencedStore>(gateway.storage.get(), limits_);
    }
    return gateway;
  }

  absl::Status Execute(const std::string& sql) {
    return testing::PostgresServer::Execute(uri(), sql);
  }

  // Polls `sql` until it returns a non-NULL value, which it returns; a
  // safety net of 60 s, not a timing assumption.
  absl::StatusOr<std::string> AwaitValue(const std::string& sql) {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    std::string value;
    while (absl::Now() < give_up) {
      value = QueryValue(uri(), sql);
      if (!value.empty() && !absl::StartsWith(value, "error: ")) return value;
      absl::SleepFor(absl::Milliseconds(5));  // poll interval, under a deadline
    }
    return absl::DeadlineExceededError(
        absl::StrCat("no row within 60 s from: ", sql, " (last: ", value, ")"));
  }
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_GATEWAY_POSTGRES_FIXTURE_H_
