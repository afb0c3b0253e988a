// The gateway's storages open fencegate 0.1.0's state (the fixtures of
// make_fixtures.sh): a SQLite file, and a schema on the test process's
// PostgreSQL server (harness/postgres_server.h). Each reads every object
// with its value and version and every fence as 0.1.0 left them, stamps
// the state with its format once (a second open writes nothing), and goes
// on from there: versions above 0.1.0's, fences kept. State of a newer
// format is refused, naming both formats, and nothing is changed.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/build_info/build_info.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_schema.h"
#include "gateway/postgres/postgres_storage.h"
#include "gateway/sqlite_storage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/postgres_server.h"
#include "harness/temp_dir.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/testing/status_matchers.h"
#include "tests/upgrade/sqlite_upgrade_test.h"
#include "tests/upgrade/upgrade_fixtures.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The value 0.1.0 wrote to bin/blob: bytes that are not UTF-8.
const std::string kBlob("\x00\x01\xfe\xff fencegate", 14);

std::string Show(const ReadResult& r) {
  return absl::StrCat(r.found ? absl::StrCat("'", r.value, "' version ", r.version)
                              : std::string("absent"),
                      ", fence ", r.max_token);
}

// What 0.1.0 left (make_fixtures.sh's gateway_calls), on either storage.
void ExpectZeroOneZeroObjects(StorageBackend& storage) {
  const auto read = [&](absl::string_view resource, absl::string_view key) {
    absl::StatusOr<ReadResult> result = storage.ReadCommitted(resource, key);
    return result.ok() ? Show(*result) : result.status().ToString();
  };
  EXPECT_EQ(read("orders", "order-1"), "'shipped' version 3, fence 5");
  EXPECT_EQ(read("orders", "order-2"), "absent, fence 5");  // deleted
  EXPECT_EQ(read("orders", "order-3"), "'queued' version 5, fence 5");
  EXPECT_EQ(read("bin", "blob"), Show(ReadResult{true, kBlob, 1, 3}));
  absl::StatusOr<ListPage> orders = storage.ListCommitted("orders", "", 10);
  ASSERT_THAT(orders, IsOk());
  std::vector<std::string> keys;
  for (const KeyInfo& key : orders->keys) {
    keys.push_back(absl::StrCat(key.key, " v", key.version, " ", key.size_bytes, "B"));
  }
  EXPECT_THAT(keys, ElementsAre("order-1 v3 7B", "order-3 v5 6B"));
  absl::StatusOr<ResourceStats> fenced = storage.DescribeCommitted("fenced-only");
  ASSERT_THAT(fenced, IsOk());
  EXPECT_EQ(fenced->max_token, 7u);
  EXPECT_EQ(fenced->key_count, 0u);
}

// The fences hold on (a token below 0.1.0's fence is refused) and versions
// go on above 0.1.0's revisions.
void ExpectWritesToGoOn(StorageBackend& storage) {
  FencedOp stale;
  stale.kind = OpKind::kWrite;
  stale.resource = "orders";
  stale.token = 4;
  Mutation& put = stale.mutations.emplace_back();
  put.key = "order-1";
  put.kind = Mutation::Kind::kPut;
  put.value = "stale";
  FencedOp current = stale;
  current.token = 5;
  current.mutations[0].value = "delivered";
  FencedOp fence;
  fence.kind = OpKind::kFence;
  fence.resource = "fenced-only";
  fence.token = 6;
  ASSERT_THAT(storage.BeginBatch({"orders", "fenced-only"}), IsOk());
  OpResult stale_result, current_result, fence_result;
  ASSERT_THAT(storage.Apply(stale, &stale_result), IsOk());
  ASSERT_THAT(storage.Apply(current, &current_result), IsOk());
  ASSERT_THAT(storage.Apply(fence, &fence_result), IsOk());
  ASSERT_THAT(storage.CommitBatch(), IsOk());
  EXPECT_EQ(stale_result.outcome, Outcome::kStaleToken);
  EXPECT_EQ(stale_result.max_token, 5u);
  EXPECT_EQ(current_result.outcome, Outcome::kAccepted);
  EXPECT_EQ(current_result.version, 6u);
  EXPECT_EQ(fence_result.outcome, Outcome::kStaleToken);
  EXPECT_EQ(fence_result.max_token, 7u);
  absl::StatusOr<ReadResult> read = storage.ReadCommitted("orders", "order-1");
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(Show(*read), "'delivered' version 6, fence 5");
}

// ------------------------------------------------------------------ SQLite

class SqliteStorageUpgradeTest : public testing::SqliteUpgradeTest<SqliteStorage> {
 protected:
  SqliteStorageUpgradeTest()
      : SqliteUpgradeTest(
            "gateway-sqlite-0.1.0.sql", "objects.db",
            [](const std::string& path) { return SqliteStorage::Open(path, 1); }) {}
};

TEST_F(SqliteStorageUpgradeTest, TheZeroOneZeroFileReadsWholeAndIsMigratedOnce) {
  ExpectMigratedOnce(ExpectZeroOneZeroObjects);
}

TEST_F(SqliteStorageUpgradeTest, WritesGoOnAboveZeroOneZeroVersionsAndFences) {
  ExpectOnOpen(ExpectWritesToGoOn);
}

TEST_F(SqliteStorageUpgradeTest, ANewerFormatIsRefusedNamingBothAndTheFileIsUnchanged) {
  ExpectANewerFormatRefused();
}

// -------------------------------------------------------------- PostgreSQL

class PostgresStorageUpgradeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> server = testing::PostgresServer::Shared();
    ASSERT_THAT(server, IsOk());
    absl::StatusOr<std::string> uri = (*server)->NewSchemaUri();
    ASSERT_THAT(uri, IsOk());
    uri_ = *uri;
    absl::StatusOr<PostgresTarget> target = PostgresTarget::Parse(uri_);
    ASSERT_THAT(target, IsOk());
    target_ = *target;
    absl::StatusOr<std::string> fixture =
        testing::ReadFixture("gateway-postgres-0.1.0.sql");
    ASSERT_THAT(fixture, IsOk());
    ASSERT_THAT(testing::PostgresServer::Execute(uri_, *fixture), IsOk());
  }

  // The first column of the first row of `sql` ("" for none or NULL).
  std::string Query(const std::string& sql) {
    try {
      pqxx::connection connection(uri_);
      pqxx::nontransaction txn(connection);
      const pqxx::result rows = txn.exec(sql);
      return rows.empty() || rows[0][0].is_null() ? "" : rows[0][0].c_str();
    } catch (const std::exception& e) {
      return absl::StrCat("error: ", e.what());
    }
  }
  // The marker as another program reads it ("" if none).
  std::string Marker() {
    if (Query("SELECT to_regclass('fencegate_meta') IS NULL") == "t") return "";
    return Query("SELECT value FROM fencegate_meta WHERE key = 'format'");
  }
  // What a migration would write: the marker's row version and the
  // function's catalog row.
  std::string Written() {
    return Query(
        "SELECT (SELECT xmin::text FROM fencegate_meta WHERE key = 'format') || ' ' || "
        "(SELECT xmin::text FROM pg_proc WHERE oid = to_regprocedure("
        "'fencegate_apply_v1(text,bigint,smallint,text[],integer[],bytea,bigint[])'))");
  }
  absl::StatusOr<StateFormatAtOpen> Ensure() {
    absl::StatusOr<std::unique_ptr<pqxx::connection>> connection = Connect(target_);
    if (!connection.ok()) return connection.status();
    StateFormatAtOpen at_open;
    absl::Status status = EnsurePostgresSchema(**connection, &at_open);
    if (!status.ok()) return status;
    return at_open;
  }

  std::string uri_;
  PostgresTarget target_;
};

TEST_F(PostgresStorageUpgradeTest, TheZeroOneZeroSchemaReadsWholeAndIsMigratedOnce) {
  EXPECT_EQ(Marker(), "");
  // What a gateway's start does first (PostgresStorage::Open() calls it).
  absl::StatusOr<StateFormatAtOpen> first = Ensure();
  ASSERT_THAT(first, IsOk());
  EXPECT_FALSE(first->marked.has_value());
  EXPECT_FALSE(first->created);
  EXPECT_TRUE(first->migrated());
  EXPECT_EQ(Marker(), absl::StrCat(kPostgresStateFormat));
  {
    absl::StatusOr<std::unique_ptr<PostgresStorage>> storage =
        PostgresStorage::Open(target_, 1);
    ASSERT_THAT(storage, IsOk());
    ExpectZeroOneZeroObjects(**storage);
  }
  const std::string written = Written();

  // Opened again: the format is found, nothing is migrated or written.
  absl::StatusOr<StateFormatAtOpen> again = Ensure();
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->marked, kPostgresStateFormat);
  EXPECT_FALSE(again->migrated());
  {
    absl::StatusOr<std::unique_ptr<PostgresStorage>> storage =
        PostgresStorage::Open(target_, 1);
    ASSERT_THAT(storage, IsOk());
    ExpectZeroOneZeroObjects(**storage);
  }
  EXPECT_EQ(Written(), written) << "the second open wrote the marker or the function";
}

TEST_F(PostgresStorageUpgradeTest, WritesGoOnAboveZeroOneZeroVersionsAndFences) {
  absl::StatusOr<std::unique_ptr<PostgresStorage>> storage =
      PostgresStorage::Open(target_, 1);
  ASSERT_THAT(storage, IsOk());
  ExpectWritesToGoOn(**storage);
}

TEST_F(PostgresStorageUpgradeTest, ANewerFormatIsRefusedNamingBothAndNothingChanges) {
  const int64_t newer = kPostgresStateFormat + 1;
  // A newer release's schema: its marker, and a function body of its own,
  // which this version would otherwise replace with its own.
  const std::string definition = Query(
      "SELECT pg_get_functiondef(to_regprocedure("
      "'fencegate_apply_v1(text,bigint,smallint,text[],integer[],bytea,bigint[])'))");
  ASSERT_THAT(definition, HasSubstr("DECLARE"));
  ASSERT_THAT(
      testing::PostgresServer::Execute(
          uri_, absl::StrCat(
                    absl::StrReplaceAll(definition, {{"DECLARE", "-- newer\nDECLARE"}}),
                    ";\nCREATE TABLE fencegate_meta(key text PRIMARY KEY, "
                    "value bigint NOT NULL);\n"
                    "INSERT INTO fencegate_meta VALUES ('format', ",
                    newer, ")")),
      IsOk());
  const std::string written = Written();
  EXPECT_THAT(
      PostgresStorage::Open(target_, 1),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("the gateway's PostgreSQL schema"),
                     HasSubstr(absl::StrCat(" has state format ", newer)),
                     HasSubstr(absl::StrCat(ProjectVersion(), " reads formats up to ",
                                            kPostgresStateFormat)),
                     HasSubstr("upgrade the binary or restore a backup"))));
  EXPECT_EQ(Written(), written);
  EXPECT_THAT(Query("SELECT prosrc FROM pg_proc WHERE proname = 'fencegate_apply_v1' AND "
                    "pronamespace = current_schema()::regnamespace"),
              HasSubstr("-- newer"));
  EXPECT_EQ(Marker(), absl::StrCat(newer));
}

}  // namespace
}  // namespace fencegate::gateway
