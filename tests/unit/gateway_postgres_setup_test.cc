// How the PostgreSQL backend meets its database: the connection URI (never
// a password in logs), an unreachable server, gateways creating the schema
// together, a database in the wrong encoding, and server defaults it must
// not inherit (synchronous_commit off, another isolation level).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_postgres_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(PostgresTargetTest, DescriptionNamesTheServerButNeverThePassword) {
  ASSERT_OK_AND_ASSIGN(
      PostgresTarget target,
      PostgresTarget::Parse(
          "postgres://fg:pw-in-userinfo@db.example:6432/fences?password=pw-in-query"
          "&sslmode=disable"));
  EXPECT_THAT(target.description(),
              AllOf(HasSubstr("host=db.example"), HasSubstr("port=6432"),
                    HasSubstr("dbname=fences"), HasSubstr("user=fg"),
                    Not(HasSubstr("pw-in"))));
  // libpq still gets everything, plus a connect timeout and a name.
  EXPECT_THAT(target.conninfo(),
              AllOf(HasSubstr("password='pw-in-query'"), HasSubstr("connect_timeout=10"),
                    HasSubstr("application_name=fencegate-gateway"),
                    HasSubstr("client_encoding=UTF8")));
}

TEST(PostgresTargetTest, TheUriSetsTheConnectTimeoutIfItWants) {
  ASSERT_OK_AND_ASSIGN(PostgresTarget target,
                       PostgresTarget::Parse("postgresql://h/db?connect_timeout=3"));
  EXPECT_THAT(target.conninfo(),
              AllOf(HasSubstr("connect_timeout='3'"), Not(HasSubstr("connect_timeout=10"))));
}

TEST(PostgresTargetTest, BadUrisAreRefusedSayingWhy) {
  EXPECT_THAT(PostgresTarget::Parse("mysql://h/db"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("postgres://")));
  EXPECT_THAT(PostgresTarget::Parse("postgres://[::1/db"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("malformed")));
  EXPECT_THAT(PostgresTarget::Parse("postgres://h/db?no_such_option=1"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no_such_option")));
}

TEST(PostgresStorageOpenTest, UnreachableServerIsUnavailableNamingIt) {
  // Nothing listens on port 1 of loopback: refused at once.
  ASSERT_OK_AND_ASSIGN(PostgresTarget target,
                       PostgresTarget::Parse("postgres://fencegate@127.0.0.1:1/postgres"));
  EXPECT_THAT(PostgresStorage::Open(target),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("PostgreSQL failed while connecting"),
                             HasSubstr("port=1"))));
}

// Four gateways start at once on an empty schema: each creates the tables
// and the function if missing, and none fails on the others' half-made
// catalog entries.
TEST_F(PostgresStoreTest, GatewaysStartingTogetherOnAnEmptySchemaAllSucceed) {
  ASSERT_OK_AND_ASSIGN(testing::PostgresServer * server, testing::PostgresServer::Shared());
  ASSERT_OK_AND_ASSIGN(std::string fresh, server->NewSchemaUri());
  ASSERT_OK_AND_ASSIGN(PostgresTarget target, PostgresTarget::Parse(fresh));
  absl::Notification go;
  std::vector<absl::StatusOr<std::unique_ptr<PostgresStorage>>> opened;
  for (int i = 0; i < 4; ++i) opened.push_back(absl::UnknownError("not run"));
  std::vector<std::thread> starting;
  for (auto& result : opened) {
    starting.emplace_back([&] {
      go.WaitForNotification();
      result = PostgresStorage::Open(target, 1);
    });
  }
  go.Notify();
  for (std::thread& t : starting) t.join();
  for (const auto& result : opened) ASSERT_THAT(result, IsOk());

  // One gateway's write is the others' read.
  StorageBackend& first = *opened[0].value();
  ASSERT_THAT(first.BeginBatch({"r"}), IsOk());
  OpResult result;
  ASSERT_THAT(first.Apply(WriteOp("r", 3, "v"), &result), IsOk());
  ASSERT_THAT(first.CommitBatch(), IsOk());
  ASSERT_OK_AND_ASSIGN(ReadResult read, opened[3].value()->ReadCommitted("r", "k"));
  EXPECT_EQ(read.value, "v");
  EXPECT_EQ(read.max_token, 3u);
}

// Once the schema is there, a gateway creates nothing: a role with only
// the rights to use the tables (and EXECUTE, which every role has on a new
// function) runs one.
TEST_F(PostgresStoreTest, ARoleWithOnlyDataRightsRunsAGatewayOnAnExistingSchema) {
  const std::string role = absl::StrCat("fg_app_", getpid());
  const std::string schema = QueryValue(uri(), "SELECT current_schema()");
  ASSERT_THAT(Execute(absl::StrCat(
                  "CREATE ROLE ", role, " LOGIN; GRANT USAGE ON SCHEMA ", schema, " TO ", role,
                  "; GRANT SELECT, INSERT, UPDATE, DELETE ON fencegate_resources, "
                  "fencegate_objects TO ",
                  role)),
              IsOk());
  std::string as_role = uri();
  as_role.replace(as_role.find("fencegate@"), std::string("fencegate").size(), role);
  EXPECT_THAT(QueryValue(as_role, "CREATE TABLE t(x int)"), HasSubstr("permission denied"));

  ASSERT_OK_AND_ASSIGN(PostgresTarget target, PostgresTarget::Parse(as_role));
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresStorage> storage,
                         PostgresStorage::Open(target, 1));
    ASSERT_THAT(storage->BeginBatch({"r", "s"}), IsOk());
    OpResult result;
    ASSERT_THAT(storage->Apply(WriteOp("r", 4, "v"), &result), IsOk());
    EXPECT_EQ(result.outcome, Outcome::kAccepted);
    ASSERT_THAT(storage->CommitBatch(), IsOk());
  }
  EXPECT_EQ(ValueOf("r", "k"), "v");
  EXPECT_THAT(Execute(absl::StrCat("DROP OWNED BY ", role, "; DROP ROLE ", role)), IsOk());
}

TEST_F(PostgresStoreTest, ADatabaseThatIsNotUtf8IsRefused) {
  const std::string database = "latin1_" + std::to_string(getpid());
  ASSERT_THAT(Execute("CREATE DATABASE " + database +
                      " ENCODING 'LATIN1' LOCALE_PROVIDER libc LC_COLLATE 'C' LC_CTYPE 'C' "
                      "TEMPLATE template0"),
              IsOk());
  ASSERT_OK_AND_ASSIGN(testing::PostgresServer * server, testing::PostgresServer::Shared());
  const std::string latin1 = absl::StrCat("postgresql://fencegate@127.0.0.1:",
                                          server->port(), "/", database);
  ASSERT_OK_AND_ASSIGN(PostgresTarget target, PostgresTarget::Parse(latin1));
  EXPECT_THAT(PostgresStorage::Open(target),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("LATIN1"), HasSubstr("UTF8"))));
  EXPECT_THAT(Execute("DROP DATABASE " + database), IsOk());
}

// The server (here: the session defaults the URI sets) would have the
// gateway's commits return before they are durable, and its batches run at
// SERIALIZABLE. The gateway overrides both for its write session: what
// every write sees, recorded by a trigger.
TEST_F(PostgresStoreTest, WriteSessionIsDurableAndReadCommittedWhateverTheDefaults) {
  const std::string lax = absl::StrCat(
      uri(), "%20-csynchronous_commit%3Doff%20-cdefault_transaction_isolation%3Dserializable");
  ASSERT_OK_AND_ASSIGN(PostgresTarget target, PostgresTarget::Parse(lax));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<PostgresStorage> storage,
                       PostgresStorage::Open(target, 1));
  ASSERT_THAT(Execute(R"sql(
      CREATE TABLE seen(settings text);
      CREATE FUNCTION record_settings() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO seen VALUES (current_setting('synchronous_commit') || ' ' ||
                                     current_setting('transaction_isolation'));
      RETURN NULL; END $$;
      CREATE TRIGGER record_settings AFTER INSERT ON fencegate_objects
      FOR EACH ROW EXECUTE FUNCTION record_settings())sql"),
              IsOk());
  // The URI really does set those defaults for a session.
  EXPECT_EQ(QueryValue(lax, "SELECT current_setting('synchronous_commit')"), "off");

  ASSERT_THAT(storage->BeginBatch({"r"}), IsOk());
  OpResult result;
  ASSERT_THAT(storage->Apply(WriteOp("r", 1, "v"), &result), IsOk());
  ASSERT_THAT(storage->CommitBatch(), IsOk());
  EXPECT_EQ(QueryValue(uri(), "SELECT settings FROM seen"), "on read committed");
}

}  // namespace
}  // namespace fencegate::gateway
