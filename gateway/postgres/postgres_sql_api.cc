#include "gateway/postgres/postgres_sql_api.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gateway/postgres/postgres_connection.h"
#include "gateway/postgres/postgres_schema.h"
#include "gateway/postgres/sql_api_script.h"  // generated: kSqlApiScriptText
#include "pqxx/binarystring"
#include "pqxx/nontransaction"
#include "pqxx/transaction"

namespace fencegate::gateway {

const char* SqlApiScript() { return kSqlApiScriptText; }

absl::Status InstallSqlApi(pqxx::connection& connection) {
  if (absl::Status schema = EnsurePostgresSchema(connection); !schema.ok()) return schema;
  try {
    pqxx::work install(connection);
    install.exec(kSchemaLockSql);
    install.exec(kSqlApiScriptText);
    const int version = install.exec1("SELECT fencegate_sql_api_version()")[0].as<int>();
    if (version != kSqlApiVersion) {
      return absl::InternalError(absl::StrCat("the SQL API script installed version ",
                                              version, ", not ", kSqlApiVersion));
    }
    install.commit();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return PostgresError(e, "installing the SQL fencing API");
  }
}

absl::Status LoadSqlKeys(pqxx::connection& connection, const KeyRing& keys) {
  try {
    pqxx::work load(connection);
    if (load.exec1("SELECT to_regclass('fencegate_keys') IS NULL")[0].as<bool>()) {
      return absl::FailedPreconditionError(
          "the SQL fencing API is not installed in this schema (no fencegate_keys): run "
          "`fencegate sql-install` first");
    }
    load.exec0("DELETE FROM fencegate_keys");
    for (const SigningKey& key : keys.keys()) {
      const std::string not_after =
          key.not_after == absl::InfiniteFuture() ? "" : FormatKeyTime(key.not_after);
      load.exec_params0(
          "INSERT INTO fencegate_keys(id, secret, not_after) "
          "VALUES ($1, $2, nullif($3, '')::timestamptz)",
          key.id, pqxx::binarystring(key.secret.data(), key.secret.size()), not_after);
    }
    load.commit();
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return PostgresError(e, "loading the signing keys into fencegate_keys");
  }
}

}  // namespace fencegate::gateway
