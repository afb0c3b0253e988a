// fencegate-orders: fencing a table of your own on PostgreSQL, with the SQL
// fencing API (docs/sql-fencing.md) and the client library's RunFenced.
//
//   fencegate sql-install --postgres=URI      # once, as the schema's owner
//   fencegate-orders --lockservice=HOST:PORT --postgres=URI [--order=42]
//
// The orders table is the program's own (created if missing); the gateway
// is not involved. Kleppmann's scenario, with real leases:
//   1. holder A takes the lock on "orders/<id>" with a short lease and no
//      renewal, and ships the order in a fenced transaction;
//   2. A "pauses" (it simply stops renewing); holder B queues for the lock,
//      which the lock service grants it when A's lease expires, and B
//      cancels the order in a fenced transaction;
//   3. A wakes up and, still believing it holds the lock, writes again
//      with its old token: the transaction is refused (ZF001, IsStaleToken)
//      and rolled back, so B's cancellation stands.
// Exit status 0 when all of that happened as described, 1 otherwise (the
// reason on stderr), 2 for bad usage.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/client/postgres_fence.h"

ABSL_FLAG(std::string, lockservice, "127.0.0.1:7070", "the lock service, host:port");
ABSL_FLAG(
    std::string, postgres, "",
    "the database, as a libpq URI; `fencegate sql-install` must have run on its schema");
ABSL_FLAG(int, order, 42, "the order to ship, then cancel");

namespace {

using fencegate::client::Fencing;
using fencegate::client::LockClient;
using fencegate::client::RunFenced;

int Fail(const std::string& what, const absl::Status& status) {
  std::cerr << "fencegate-orders: " << what << ": " << status << "\n";
  return EXIT_FAILURE;
}

// The state change one holder makes, in a transaction fenced with its token.
absl::Status SetState(pqxx::connection& db, const Fencing& fencing, int order,
                      const std::string& state, const std::string& by) {
  return RunFenced(db, fencing, [&](pqxx::transaction_base& txn) {
    txn.exec_params0(
        "INSERT INTO orders(id, state, updated_by) VALUES ($1, $2, $3) "
        "ON CONFLICT (id) DO UPDATE SET state = $2, updated_by = $3",
        order, state, by);
  });
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "fencegate-orders --lockservice=HOST:PORT --postgres=URI [--order=N]");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_postgres).empty()) {
    std::cerr << "fencegate-orders: --postgres is required\n";
    return 2;
  }
  const int order = absl::GetFlag(FLAGS_order);
  const std::string resource = absl::StrCat("orders/", order);

  absl::StatusOr<std::unique_ptr<LockClient>> locks =
      LockClient::Connect(absl::GetFlag(FLAGS_lockservice));
  if (!locks.ok()) return Fail("lock service", locks.status());
  std::unique_ptr<pqxx::connection> db;
  try {
    db = std::make_unique<pqxx::connection>(absl::GetFlag(FLAGS_postgres));
    pqxx::nontransaction setup(*db);
    if (setup.exec1("SELECT to_regproc('fencegate_fence') IS NULL")[0].as<bool>()) {
      std::cerr
          << "fencegate-orders: the SQL fencing API is not installed in this schema: "
             "run `fencegate sql-install --postgres=URI` first\n";
      return EXIT_FAILURE;
    }
    setup.exec0(
        "CREATE TABLE IF NOT EXISTS orders(id integer PRIMARY KEY, state text NOT NULL, "
        "updated_by text NOT NULL)");
  } catch (const std::exception& e) {
    return Fail("PostgreSQL", absl::UnavailableError(e.what()));
  }

  // 1. A: a lease that nothing renews, as if A's renewals stopped.
  fencegate::client::AcquireOptions short_lease;
  short_lease.ttl = absl::Seconds(1);
  short_lease.wait = absl::Seconds(30);
  auto a = (*locks)->Acquire(resource, "holder-A", short_lease);
  if (!a.ok() || !a->acquired) return Fail("A acquires", a.status());
  const Fencing a_fencing{resource, a->token, a->signature};
  if (absl::Status s = SetState(*db, a_fencing, order, "shipped", "A"); !s.ok()) {
    return Fail("A ships", s);
  }
  std::cout << "A (token " << a->token << ") shipped order " << order << "\n";

  // 2. A pauses. B queues; the lock service grants it when A's lease ends.
  std::cout << "A pauses; B waits for the lock\n";
  auto b = (*locks)->AcquireLease(resource, "holder-B", short_lease);
  if (!b.ok()) return Fail("B acquires", b.status());
  if (absl::Status s =
          SetState(*db, fencegate::client::FencingOf(**b), order, "cancelled", "B");
      !s.ok()) {
    return Fail("B cancels", s);
  }
  std::cout << "B (token " << (*b)->token() << ") cancelled order " << order << "\n";

  // 3. A wakes up and writes with its old token.
  const absl::Status late = SetState(*db, a_fencing, order, "shipped again", "A");
  if (!fencegate::client::IsStaleToken(late)) {
    return Fail("A's late write should have been refused as stale", late);
  }
  std::cout << "A's late write (token " << a->token
            << ") was refused: the fence is at token "
            << fencegate::client::CurrentToken(late) << "\n";
  std::string state;
  try {
    state = pqxx::nontransaction(*db)
                .exec_params1(
                    "SELECT state || ' by ' || updated_by FROM orders WHERE id = $1",
                    order)[0]
                .as<std::string>();
  } catch (const std::exception& e) {
    return Fail("reading the order", absl::UnavailableError(e.what()));
  }
  std::cout << "order " << order << " is " << state << "\n";
  if (state != "cancelled by B") {
    return Fail("the order should be B's", absl::InternalError(state));
  }
  if (absl::Status released = (*b)->Release(); !released.ok()) {
    return Fail("B releases", released);
  }
  return EXIT_SUCCESS;
}
