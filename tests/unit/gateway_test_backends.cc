#include "tests/unit/gateway_test_backends.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/sqlite.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_storage.h"
#include "gateway/sqlite_storage.h"
#include "harness/postgres_server.h"
#include "harness/temp_dir.h"

namespace fencegate::gateway {
namespace {

class SqliteTestBackend final : public TestBackend {
 public:
  absl::StatusOr<std::unique_ptr<StorageBackend>> Open() override {
    absl::StatusOr<std::unique_ptr<SqliteStorage>> storage = SqliteStorage::Open(path_, 2);
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<StorageBackend>(*std::move(storage));
  }

  absl::Status FailWritesOfKey(const std::string& key) override {
    // Opening the store first creates the tables the trigger refers to.
    absl::StatusOr<std::unique_ptr<StorageBackend>> storage = Open();
    if (!storage.ok()) return storage.status();
    absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path_);
    if (!db.ok()) return db.status();
    return (*db)->Exec(absl::StrCat(
        "CREATE TRIGGER fail_", key, " BEFORE INSERT ON objects WHEN NEW.key = '", key,
        "' BEGIN SELECT RAISE(ABORT, 'injected failure'); END"));
  }

 private:
  testing::TempDir dir_;
  const std::string path_ = dir_.File("gateway.db");
};

class PostgresTestBackend final : public TestBackend {
 public:
  explicit PostgresTestBackend(std::string uri) : uri_(std::move(uri)) {}

  absl::StatusOr<std::unique_ptr<StorageBackend>> Open() override {
    absl::StatusOr<PostgresTarget> target = PostgresTarget::Parse(uri_);
    if (!target.ok()) return target.status();
    absl::StatusOr<std::unique_ptr<PostgresStorage>> storage =
        PostgresStorage::Open(*target, 2);
    if (!storage.ok()) return storage.status();
    return std::unique_ptr<StorageBackend>(*std::move(storage));
  }

  std::string postgres_uri() const override { return uri_; }

  absl::Status FailWritesOfKey(const std::string& key) override {
    absl::StatusOr<std::unique_ptr<StorageBackend>> storage = Open();
    if (!storage.ok()) return storage.status();
    return testing::PostgresServer::Execute(
        uri_, absl::StrCat("CREATE FUNCTION fail_", key,
                           "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                           "RAISE EXCEPTION 'injected failure'; END $$; "
                           "CREATE TRIGGER fail_", key,
                           " BEFORE INSERT ON fencegate_objects FOR EACH ROW WHEN (NEW.key = '",
                           key, "') EXECUTE FUNCTION fail_", key, "()"));
  }

 private:
  const std::string uri_;
};

}  // namespace

std::string BackendName(const ::testing::TestParamInfo<BackendKind>& info) {
  return info.param == BackendKind::kSqlite ? "Sqlite" : "Postgres";
}

void PrintTo(BackendKind kind, std::ostream* out) {
  *out << (kind == BackendKind::kSqlite ? "SQLite" : "PostgreSQL");
}

absl::StatusOr<std::unique_ptr<TestBackend>> TestBackend::Create(BackendKind kind) {
  if (kind == BackendKind::kSqlite) return std::make_unique<SqliteTestBackend>();
  absl::StatusOr<testing::PostgresServer*> server = testing::PostgresServer::Shared();
  if (!server.ok()) return server.status();
  absl::StatusOr<std::string> uri = (*server)->NewSchemaUri();
  if (!uri.ok()) return uri.status();
  return std::make_unique<PostgresTestBackend>(*std::move(uri));
}

}  // namespace fencegate::gateway
