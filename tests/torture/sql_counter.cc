#include "tests/torture/sql_counter.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/fencing.h"
#include "fencegate/client/postgres_fence.h"
#include "pqxx/pqxx"

namespace fencegate::torture {
namespace {

constexpr char kSessionSetup[] = "SET idle_in_transaction_session_timeout = '30s'";

// The fence the transaction runs under (its own, once fencegate_fence has
// raised it) and the key's value and version; no row: not found.
constexpr char kReadSql[] = R"sql(
SELECT r.max_token, o.value, o.version
  FROM fencegate_resources AS r
  LEFT JOIN fencegate_objects AS o ON o.resource = r.name AND o.key = $2
  WHERE r.name = $1
)sql";

// fencegate_apply_v1's write: the resource's next revision, for every key.
constexpr char kNextRevisionSql[] = R"sql(
UPDATE fencegate_resources SET revision = revision + 1 WHERE name = $1
  RETURNING revision, max_token
)sql";
constexpr char kPutSql[] = R"sql(
INSERT INTO fencegate_objects AS o (resource, key, value, version) VALUES ($1, $2, $3, $4)
  ON CONFLICT (resource, key) DO UPDATE SET value = excluded.value, version = excluded.version
)sql";

// The planted bug's transaction: the body alone, no fencegate_fence.
template <typename Body>
absl::Status RunUnfenced(pqxx::connection& connection, Body&& body) {
  try {
    pqxx::work txn(connection);
    // The resource's row, which fencegate_fence would have made.
    txn.exec_params(
        "INSERT INTO fencegate_resources (name, max_token, revision) VALUES ($1, 0, 0) "
        "ON CONFLICT (name) DO NOTHING",
        body.resource);
    body(txn);
    txn.commit();
    return absl::OkStatus();
  } catch (const pqxx::in_doubt_error& e) {
    return absl::UnknownError(e.what());
  } catch (const pqxx::broken_connection& e) {
    return absl::UnavailableError(e.what());
  } catch (const pqxx::sql_error& e) {
    return client::FromSqlFencingError(e.sqlstate(), e.what());
  }
}

}  // namespace

SqlCounter::SqlCounter(std::string uri, bool skip_fence)
    : uri_(std::move(uri)), skip_fence_(skip_fence) {}

SqlCounter::~SqlCounter() = default;

absl::StatusOr<pqxx::connection*> SqlCounter::Connection() {
  if (connection_ != nullptr && connection_->is_open()) return connection_.get();
  connection_.reset();
  try {
    auto connection = std::make_unique<pqxx::connection>(uri_);
    pqxx::nontransaction setup(*connection);
    setup.exec0(kSessionSetup);
    setup.commit();
    connection_ = std::move(connection);
    return connection_.get();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("connecting to PostgreSQL: ", e.what()));
  }
}

absl::Status SqlCounter::Answer(absl::Status status) {
  if (status.ok() || client::IsStaleToken(status)) return status;
  connection_.reset();  // whatever it was, start again on a fresh session
  return absl::UnknownError(
      absl::StrCat("may or may not have committed: ", status.ToString()));
}

absl::StatusOr<client::ReadResult> SqlCounter::Read(const client::Lease& lease,
                                                    const std::string& key) {
  absl::StatusOr<pqxx::connection*> connection = Connection();
  if (!connection.ok()) return Answer(connection.status());
  client::ReadResult result;
  absl::Status status;
  try {
    status = client::RunFenced(
        **connection, client::FencingOf(lease), [&](pqxx::transaction_base& txn) {
          const pqxx::row row = txn.exec_params1(kReadSql, lease.resource(), key);
          result.max_token = static_cast<uint64_t>(row[0].as<int64_t>());
          result.found = !row[1].is_null();
          if (result.found) {
            result.value = pqxx::binarystring(row[1]).str();
            result.version = static_cast<uint64_t>(row[2].as<int64_t>());
          }
        });
  } catch (const std::exception& e) {
    status = absl::InternalError(e.what());
  }
  if (!status.ok()) return Answer(status);
  return result;
}

absl::StatusOr<client::MultiWriteResult> SqlCounter::MultiWrite(
    const client::Lease& lease,
    const std::vector<std::pair<std::string, std::string>>& puts) {
  absl::StatusOr<pqxx::connection*> connection = Connection();
  if (!connection.ok()) return Answer(connection.status());
  client::MultiWriteResult result;
  struct Body {
    const std::string& resource;
    const std::vector<std::pair<std::string, std::string>>& puts;
    client::MultiWriteResult& result;
    void operator()(pqxx::transaction_base& txn) const {
      const pqxx::row row = txn.exec_params1(kNextRevisionSql, resource);
      const int64_t revision = row[0].as<int64_t>();
      result.max_token = static_cast<uint64_t>(row[1].as<int64_t>());
      result.versions.clear();
      for (const auto& [key, value] : puts) {
        txn.exec_params0(kPutSql, resource, key,
                         pqxx::binarystring(value.data(), value.size()), revision);
        result.versions.push_back(static_cast<uint64_t>(revision));
      }
    }
  } body{lease.resource(), puts, result};
  absl::Status status;
  try {
    status = skip_fence_
                 ? RunUnfenced(**connection, body)  // PLANTED BUG: no fencegate_fence
                 : client::RunFenced(**connection, client::FencingOf(lease), body);
  } catch (const std::exception& e) {
    status = absl::InternalError(e.what());
  }
  if (!status.ok()) return Answer(status);
  return result;
}

}  // namespace fencegate::torture
