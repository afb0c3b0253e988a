#include "gateway/postgres/postgres_connection.h"

#include <libpq-fe.h>

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "pqxx/except"

namespace fencegate::gateway {
namespace {

// Added to the connection string unless the URI sets them: a server that
// does not answer must not hang the gateway's writer thread for ever, and
// pg_stat_activity should say who a session belongs to.
constexpr char kDefaultConnectTimeoutSeconds[] = "10";
constexpr char kApplicationName[] = "fencegate-gateway";

// A value in libpq's keyword='value' syntax: quotes and backslashes escaped.
std::string Quoted(absl::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

// SQLSTATE classes worth a retry: connection exception, transaction
// rollback (deadlock, serialization), insufficient resources, operator
// intervention (shutdown, cancel), object not in prerequisite state (lock
// not available).
bool IsTransient(const std::string& sqlstate) {
  for (const char* prefix : {"08", "40", "53", "57", "55P03"}) {
    if (absl::StartsWith(sqlstate, prefix)) return true;
  }
  return false;
}

}  // namespace

bool PostgresTarget::IsPostgresUri(absl::string_view storage) {
  return absl::StartsWith(storage, "postgres://") ||
         absl::StartsWith(storage, "postgresql://");
}

absl::StatusOr<PostgresTarget> PostgresTarget::Parse(absl::string_view uri) {
  if (!IsPostgresUri(uri)) {
    return absl::InvalidArgumentError(
        "a PostgreSQL connection URI must start with postgres:// or postgresql:// "
        "(e.g. postgres://user@host:5432/db)");
  }
  const std::string owned(uri);
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(owned.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return absl::InvalidArgumentError(
        absl::StrCat("the PostgreSQL connection URI is malformed: ", message));
  }
  std::vector<std::string> conninfo;
  std::vector<std::string> shown;
  bool has_timeout = false;
  bool has_application_name = false;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const absl::string_view keyword = o->keyword;
    if (keyword == "client_encoding") continue;  // always UTF8, below
    conninfo.push_back(absl::StrCat(keyword, "=", Quoted(o->val)));
    has_timeout |= keyword == "connect_timeout";
    has_application_name |= keyword == "application_name";
    // libpq's display hint: "*" = secret (password), "D" = debug option.
    const absl::string_view display = o->dispchar != nullptr ? o->dispchar : "";
    if (display.empty()) shown.push_back(absl::StrCat(keyword, "=", o->val));
  }
  PQconninfoFree(options);
  // Names are UTF-8 (validated by the gateway) and reach the server as is.
  conninfo.push_back("client_encoding=UTF8");
  if (!has_timeout) {
    conninfo.push_back(absl::StrCat("connect_timeout=", kDefaultConnectTimeoutSeconds));
  }
  if (!has_application_name) {
    conninfo.push_back(absl::StrCat("application_name=", kApplicationName));
  }
  PostgresTarget target;
  target.conninfo_ = absl::StrJoin(conninfo, " ");
  target.description_ = shown.empty() ? "libpq defaults" : absl::StrJoin(shown, " ");
  return target;
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> Connect(const PostgresTarget& target) {
  try {
    return std::make_unique<pqxx::connection>(target.conninfo());
  } catch (const std::exception& e) {
    return PostgresError(e, absl::StrCat("connecting (", target.description(), ")"));
  }
}

absl::Status PostgresError(const std::exception& error, absl::string_view what) {
  // libpq's messages span lines (a hint on a tabbed line): make them one.
  std::string message;
  for (char c : absl::StripAsciiWhitespace(error.what())) {
    const bool blank = c == '\n' || c == '\t';
    if (!blank) {
      message.push_back(c);
    } else if (!message.empty() && message.back() != ' ') {
      message.push_back(' ');
    }
  }
  const std::string text = absl::StrCat("PostgreSQL failed while ", what, ": ", message);
  if (dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr) {
    return absl::UnknownError(text);
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr ||
      dynamic_cast<const pqxx::transaction_rollback*>(&error) != nullptr) {
    return absl::UnavailableError(text);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    const std::string with_state =
        sql->sqlstate().empty() ? text : absl::StrCat(text, " (SQLSTATE ", sql->sqlstate(), ")");
    return IsTransient(sql->sqlstate()) ? absl::UnavailableError(with_state)
                                        : absl::InternalError(with_state);
  }
  return absl::InternalError(text);
}

bool IsConnectionLost(const std::exception& error) {
  return dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr ||
         dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr;
}

}  // namespace fencegate::gateway
