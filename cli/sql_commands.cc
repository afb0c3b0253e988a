// `fencegate sql-install` and `fencegate sql-keys`: the SQL fencing API on a
// PostgreSQL database (gateway/postgres/postgres_sql_api.h,
// docs/sql-fencing.md).
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "common/signing/signing_keys.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_sql_api.h"
#include "pqxx/nontransaction"

ABSL_FLAG(std::string, postgres, "",
          "sql-install, sql-keys: the database, as a libpq URI "
          "(postgresql://user@host:port/db?options=-csearch_path%3Dschema)");
ABSL_FLAG(std::string, signing_keys, "",
          "sql-keys: the key file the servers verify tokens with (--signing_keys)");

namespace fencegate::cli {
namespace {

// The connection --postgres names, and the schema it installs into.
struct Database {
  std::unique_ptr<pqxx::connection> connection;
  std::string description;
};

absl::StatusOr<Database> ConnectToFlag() {
  absl::StatusOr<gateway::PostgresTarget> target =
      gateway::PostgresTarget::Parse(absl::GetFlag(FLAGS_postgres));
  if (!target.ok()) {
    return UsageError(absl::StrCat("--postgres: ", target.status().message()));
  }
  absl::StatusOr<std::unique_ptr<pqxx::connection>> connection =
      gateway::Connect(*target);
  if (!connection.ok()) return connection.status();
  return Database{*std::move(connection), target->description()};
}

absl::StatusOr<std::string> CurrentSchema(pqxx::connection& connection) {
  try {
    pqxx::nontransaction query(connection);
    return query.exec1("SELECT current_schema()")[0].as<std::string>();
  } catch (const std::exception& e) {
    return gateway::PostgresError(e, "reading the current schema");
  }
}

absl::Status RunSqlInstall(CommandContext& ctx) {
  absl::StatusOr<Database> db = ConnectToFlag();
  if (!db.ok()) return db.status();
  if (absl::Status s = gateway::InstallSqlApi(*db->connection); !s.ok()) return s;
  absl::StatusOr<std::string> schema = CurrentSchema(*db->connection);
  if (!schema.ok()) return schema.status();
  ctx.out->Line(absl::StrCat("installed the SQL fencing API v", gateway::kSqlApiVersion,
                             " in schema ", *schema, " (", db->description, ")"));
  ctx.out->fields()
      .AddInt("version", gateway::kSqlApiVersion)
      .AddString("schema", *schema);
  return absl::OkStatus();
}

absl::Status RunSqlKeys(CommandContext& ctx) {
  absl::StatusOr<KeyRing> keys = KeyRing::Load(absl::GetFlag(FLAGS_signing_keys));
  if (!keys.ok())
    return UsageError(absl::StrCat("--signing_keys: ", keys.status().message()));
  absl::StatusOr<Database> db = ConnectToFlag();
  if (!db.ok()) return db.status();
  if (absl::Status s = gateway::LoadSqlKeys(*db->connection, *keys); !s.ok()) return s;
  std::vector<std::string> ids;
  for (const SigningKey& key : keys->keys()) ids.push_back(key.id);
  ctx.out->Line(absl::StrCat(
      "loaded ", ids.size(), " key(s) into fencegate_keys: ", keys->Describe(),
      "; fencegate_fence and fencegate_check now accept only tokens "
      "signed with one of them"));
  ctx.out->fields().AddInt("keys", static_cast<int64_t>(ids.size()));
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& SqlCommands() {
  static const std::vector<Command>* const kCommands = new std::vector<Command>{
      {"sql-install",
       "install the SQL fencing API in a PostgreSQL schema",
       "fencegate sql-install --postgres=URI",
       "Creates the gateway's tables (if missing) and the functions\n"
       "fencegate_fence, fencegate_check and fencegate_fence_of in the URI's\n"
       "current schema, in one transaction; running it again changes nothing.\n"
       "Run it as the role that should own the fences, not as the\n"
       "applications' role. The script: share/fencegate/sql/. Guide:\n"
       "docs/sql-fencing.md.",
       {"postgres"},
       {"postgres"},
       &RunSqlInstall},
      {"sql-keys",
       "load token-signing keys for the SQL fencing API",
       "fencegate sql-keys --postgres=URI --signing_keys=FILE",
       "Replaces the keys in fencegate_keys with the key file's (the servers'\n"
       "--signing_keys), in one transaction. With keys loaded, fencegate_fence\n"
       "and fencegate_check refuse unsigned tokens and bad signatures\n"
       "(SQLSTATE ZF002).",
       {"postgres", "signing_keys"},
       {"postgres", "signing_keys"},
       &RunSqlKeys},
  };
  return *kCommands;
}

}  // namespace fencegate::cli
