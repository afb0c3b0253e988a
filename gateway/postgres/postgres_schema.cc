#include "gateway/postgres/postgres_schema.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/log.h"
#include "gateway/postgres/postgres_connection.h"
#include "pqxx/binarystring"
#include "pqxx/nontransaction"
#include "pqxx/transaction"

namespace fencegate::gateway {
namespace {

// fencegate_apply_v1's `p_kind` argument and `o_outcome` column.
constexpr int kApplyWrite = 0;
constexpr int kApplyRead = 1;
constexpr int kApplyFence = 2;
constexpr int kOutcomeAccepted = 0;
constexpr int kOutcomeStaleToken = 1;
constexpr int kOutcomeVersionMismatch = 2;
constexpr int kOutcomeFailed = 3;  // undone alone; o_error says why

// A resource's row outlives its keys, so a revision (a version) is never
// handed out twice. A row at (0, 0) is the same as no row.
constexpr char kTables[] = R"sql(
CREATE TABLE IF NOT EXISTS fencegate_resources(
  name text COLLATE "C" PRIMARY KEY,
  max_token bigint NOT NULL,
  revision bigint NOT NULL);
CREATE TABLE IF NOT EXISTS fencegate_objects(
  resource text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  value bytea NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (resource, key));
)sql";

constexpr char kApplySignature[] =
    "fencegate_apply_v1(text,bigint,smallint,text[],integer[],bytea,bigint[])";

constexpr char kApplyHeader[] = R"sql(
CREATE OR REPLACE FUNCTION fencegate_apply_v1(
    p_resource text, p_token bigint, p_kind smallint, p_keys text[],
    p_value_sizes integer[], p_values bytea, p_expected bigint[],
    OUT o_outcome smallint, OUT o_max_token bigint, OUT o_version bigint,
    OUT o_mismatch_index integer, OUT o_found boolean, OUT o_value bytea,
    OUT o_error text)
LANGUAGE plpgsql AS )sql";

// p_kind: 0 write, 1 fenced read of p_keys[1], 2 fence. A write's
// mutation i puts p_keys[i] (its value: the next p_value_sizes[i] bytes of
// p_values) or deletes it (size -1); p_expected[i] is its expected version
// (NULL: none). Mirrors SqliteStorage::Decide().
constexpr char kApplyBody[] = R"sql(
DECLARE
  v_fence bigint;
  v_revision bigint;
  v_current bigint;
  v_offset integer := 1;
  v_count integer := coalesce(array_length(p_keys, 1), 0);
BEGIN
  o_version := 0;
  o_mismatch_index := 0;
  o_found := false;
  -- The check runs under the resource row's lock, held until the batch
  -- commits. BeginBatch locked the batch's rows in name order already;
  -- locking here again keeps the op correct on its own.
  LOOP
    SELECT r.max_token, r.revision INTO v_fence, v_revision
      FROM fencegate_resources AS r WHERE r.name = p_resource FOR UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO fencegate_resources AS r (name, max_token, revision)
      VALUES (p_resource, 0, 0) ON CONFLICT (name) DO NOTHING;
  END LOOP;
  o_max_token := v_fence;
  IF p_token < v_fence THEN
    o_outcome := 1;  -- stale token: nothing changes, not even the fence
    RETURN;
  END IF;
  IF p_kind = 0 THEN
    FOR i IN 1 .. v_count LOOP
      CONTINUE WHEN p_expected[i] IS NULL;
      SELECT o.version INTO v_current FROM fencegate_objects AS o
        WHERE o.resource = p_resource AND o.key = p_keys[i];
      v_current := coalesce(v_current, 0);  -- absent: version 0
      IF v_current <> p_expected[i] THEN
        o_outcome := 2;  -- version mismatch: nothing changes
        o_version := v_current;
        o_mismatch_index := i - 1;
        RETURN;
      END IF;
    END LOOP;
  END IF;
  IF p_kind = 0 OR p_token > v_fence THEN
    -- The change, in its own subtransaction: if it fails, it is undone
    -- alone and the batch goes on.
    BEGIN
      IF p_kind = 0 THEN
        v_revision := v_revision + 1;
        UPDATE fencegate_resources AS r SET max_token = p_token, revision = v_revision
          WHERE r.name = p_resource;
        FOR i IN 1 .. v_count LOOP
          IF p_value_sizes[i] < 0 THEN
            DELETE FROM fencegate_objects AS o
              WHERE o.resource = p_resource AND o.key = p_keys[i];
          ELSE
            INSERT INTO fencegate_objects AS o (resource, key, value, version)
              VALUES (p_resource, p_keys[i],
                      substring(p_values FROM v_offset FOR p_value_sizes[i]), v_revision)
              ON CONFLICT (resource, key)
              DO UPDATE SET value = excluded.value, version = excluded.version;
            v_offset := v_offset + p_value_sizes[i];
          END IF;
        END LOOP;
        o_version := v_revision;
      ELSE
        UPDATE fencegate_resources AS r SET max_token = p_token
          WHERE r.name = p_resource;
      END IF;
    EXCEPTION WHEN OTHERS THEN
      o_outcome := 3;
      o_version := 0;
      o_error := SQLSTATE || ': ' || SQLERRM;
      RETURN;
    END;
  END IF;
  IF p_kind = 1 THEN
    SELECT o.value, o.version INTO o_value, o_version FROM fencegate_objects AS o
      WHERE o.resource = p_resource AND o.key = p_keys[1];
    o_found := FOUND;
    o_version := coalesce(o_version, 0);
  END IF;
  o_outcome := 0;
  o_max_token := p_token;
END
)sql";

// The state format (postgres_schema.h): the row ('format', N) of
// fencegate_meta. A table rather than, say, a comment on a table: the
// migration's transaction reads and writes it like any row, pg_dump keeps
// it, and every role may read it, so a role with only data rights still
// runs gateways on a schema made earlier.
constexpr char kMetaTable[] = R"sql(
CREATE TABLE IF NOT EXISTS fencegate_meta(
  key text COLLATE "C" PRIMARY KEY,
  value bigint NOT NULL);
GRANT SELECT ON fencegate_meta TO PUBLIC;
)sql";
// Whether fencegate_meta exists, and whether the gateway's tables do not
// (a new schema).
constexpr char kInspect[] =
    "SELECT to_regclass('fencegate_meta') IS NOT NULL, "
    "to_regclass('fencegate_resources') IS NULL AND "
    "to_regclass('fencegate_objects') IS NULL";
constexpr char kReadFormat[] = "SELECT value FROM fencegate_meta WHERE key = 'format'";
constexpr char kWriteFormat[] =
    "INSERT INTO fencegate_meta(key, value) VALUES ('format', $1) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";
constexpr char kWhere[] = "SELECT current_schema(), current_database()";

// One step of the migrations: brings the schema from format `to - 1` to
// `to` inside the migration's transaction (libpqxx throws on errors).
struct PostgresMigration {
  int64_t to;
  void (*apply)(pqxx::transaction_base& txn);
};

// Format 1, the 0.1.0 format: the tables of kTables (0.1.0 wrote no
// marker; the step holds on its schemas and on a new one). A later format
// changes them in a step of its own, never in kTables. The function is not
// part of the format: it is replaced whenever its body differs from this
// version's (EnsurePostgresSchema()).
void MigrateToFormat1(pqxx::transaction_base& txn) { txn.exec0(kTables); }

constexpr PostgresMigration kMigrations[] = {
    {1, &MigrateToFormat1},
};
static_assert(kMigrations[std::size(kMigrations) - 1].to == kPostgresStateFormat);

struct Marker {
  bool empty = false;             // none of the gateway's tables: a new schema
  std::optional<int64_t> format;  // nullopt: no fencegate_meta, or no row
};

// The state's name in messages: its schema and database.
std::string StateName(pqxx::transaction_base& txn) {
  const pqxx::row where = txn.exec1(kWhere);
  return absl::StrCat("the gateway's PostgreSQL schema ",
                      where[0].is_null() ? "(none)" : where[0].c_str(), " of database ",
                      where[1].c_str());
}

absl::StatusOr<Marker> ReadMarker(pqxx::transaction_base& txn) {
  const pqxx::row inspect = txn.exec1(kInspect);
  Marker marker;
  marker.empty = inspect[1].as<bool>();
  if (!inspect[0].as<bool>()) return marker;
  const pqxx::result rows = txn.exec(kReadFormat);
  if (rows.empty()) return marker;
  const int64_t value = rows[0][0].as<int64_t>();
  if (value < 1) {
    return UnreadableStateFormatError(
        StateName(txn), "the row 'format' of fencegate_meta", rows[0][0].c_str());
  }
  marker.format = value;
  return marker;
}

// Everything is in place, with this very function body.
constexpr char kSchemaIsCurrent[] = R"sql(
SELECT to_regclass('fencegate_resources') IS NOT NULL
   AND to_regclass('fencegate_objects') IS NOT NULL
   AND EXISTS (SELECT 1 FROM pg_proc
               WHERE oid = to_regprocedure($1) AND prosrc = $2)
)sql";

bool SchemaIsCurrent(pqxx::transaction_base& txn) {
  return txn.exec_params1(kSchemaIsCurrent, kApplySignature, kApplyBody)[0].as<bool>();
}

}  // namespace

std::string PgTextArray(absl::Span<const absl::string_view> items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

ApplyArgs ApplyArgsOf(const FencedOp& op) {
  ApplyArgs args;
  switch (op.kind) {
    case OpKind::kFence:
      args.kind = kApplyFence;
      break;
    case OpKind::kSharedRead:  // not for fencegate_apply_v1: kSharedReadSql
      break;
    case OpKind::kRead:
      args.kind = kApplyRead;
      args.keys = PgTextArray({op.key});
      break;
    case OpKind::kWrite: {
      args.kind = kApplyWrite;
      std::vector<absl::string_view> keys;
      std::vector<std::string> sizes;
      std::vector<std::string> expected;
      for (const Mutation& m : op.mutations) {
        keys.push_back(m.key);
        const bool put = m.kind == Mutation::Kind::kPut;
        sizes.push_back(put ? absl::StrCat(m.value.size()) : "-1");
        if (put) absl::StrAppend(&args.values, m.value);
        expected.push_back(m.expected_version ? absl::StrCat(*m.expected_version) : "NULL");
      }
      args.keys = PgTextArray(keys);
      args.value_sizes = absl::StrCat("{", absl::StrJoin(sizes, ","), "}");
      args.expected = absl::StrCat("{", absl::StrJoin(expected, ","), "}");
      break;
    }
  }
  return args;
}

absl::Status ApplyResultOf(const pqxx::row& row, OpResult* result) {
  *result = OpResult();
  switch (row[0].as<int>()) {
    case kOutcomeAccepted:
      result->outcome = Outcome::kAccepted;
      break;
    case kOutcomeStaleToken:
      result->outcome = Outcome::kStaleToken;
      break;
    case kOutcomeVersionMismatch:
      result->outcome = Outcome::kVersionMismatch;
      break;
    case kOutcomeFailed:
      return absl::UnavailableError(absl::StrCat(
          "PostgreSQL failed while applying a request: ", row[6].as<std::string>()));
    default:
      return absl::InternalError(absl::StrCat("fencegate_apply_v1 answered outcome ",
                                              row[0].as<int>()));
  }
  result->max_token = static_cast<uint64_t>(row[1].as<int64_t>());
  result->version = static_cast<uint64_t>(row[2].as<int64_t>());
  result->mismatch_index = row[3].as<size_t>();
  result->found = row[4].as<bool>();
  if (result->found) result->value = pqxx::binarystring(row[5]).str();
  return absl::OkStatus();
}

void SharedReadResultOf(const pqxx::row& row, uint64_t token, OpResult* result) {
  *result = OpResult();
  result->max_token = static_cast<uint64_t>(row[0].as<int64_t>());
  if (token < result->max_token) {
    result->outcome = Outcome::kStaleToken;
    return;
  }
  result->outcome = Outcome::kAccepted;
  result->found = !row[1].is_null();
  if (result->found) {
    result->value = pqxx::binarystring(row[1]).str();
    result->version = static_cast<uint64_t>(row[2].as<int64_t>());
  }
}

absl::Status EnsurePostgresSchema(pqxx::connection& connection,
                                  StateFormatAtOpen* at_open) {
  try {
    {
      pqxx::nontransaction check(connection);
      absl::StatusOr<Marker> marker = ReadMarker(check);
      if (!marker.ok()) return marker.status();
      if (marker->format.has_value() && *marker->format > kPostgresStateFormat) {
        return NewerStateFormatError(StateName(check), *marker->format,
                                     kPostgresStateFormat);
      }
      if (marker->format == kPostgresStateFormat && SchemaIsCurrent(check)) {
        if (at_open != nullptr) *at_open = {marker->format, kPostgresStateFormat};
        return absl::OkStatus();
      }
    }
    pqxx::work create(connection);
    create.exec(kSchemaLockSql);
    // Again, under the lock: another gateway may have done it meanwhile.
    absl::StatusOr<Marker> marker = ReadMarker(create);
    if (!marker.ok()) return marker.status();  // `create` rolls back
    if (marker->format.has_value() && *marker->format > kPostgresStateFormat) {
      return NewerStateFormatError(StateName(create), *marker->format,
                                   kPostgresStateFormat);
    }
    const StateFormatAtOpen found{marker->format, kPostgresStateFormat, marker->empty};
    if (marker->format != kPostgresStateFormat) {
      for (const PostgresMigration& step : kMigrations) {
        if (marker->format.has_value() && step.to <= *marker->format) continue;
        step.apply(create);
      }
      create.exec0(kMetaTable);
      create.exec_params0(kWriteFormat, kPostgresStateFormat);
    }
    if (!SchemaIsCurrent(create)) {
      create.exec0(absl::StrCat(kApplyHeader, "$fencegate$", kApplyBody, "$fencegate$"));
    }
    const std::string state = found.migrated() ? StateName(create) : "";
    create.commit();
    if (found.migrated()) LogInfo("%s: state now in %s", state, found.Describe());
    if (at_open != nullptr) *at_open = found;
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return PostgresError(e, "creating or migrating the gateway's tables and function");
  }
}

}  // namespace fencegate::gateway
