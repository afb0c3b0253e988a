#include "gateway/gateway_server_options.h"

#include "absl/strings/str_cat.h"
#include "common/server_main/option_flags.h"
#include "gateway/postgres/postgres_connection.h"

namespace fencegate::gateway {
namespace {

absl::Status CheckLimits(const GatewayLimits& l) {
  if (l.max_resource_bytes == 0 || l.max_key_bytes == 0) {
    return absl::InvalidArgumentError(
        "--max_resource_bytes and --max_key_bytes must be at least 1");
  }
  if (l.max_mutations == 0) {
    return absl::InvalidArgumentError("--max_mutations must be at least 1");
  }
  if (l.max_request_bytes < l.max_value_bytes) {
    return absl::InvalidArgumentError(
        "--max_request_bytes must be at least --max_value_bytes");
  }
  if (l.max_request_bytes > (1u << 30)) {
    return absl::InvalidArgumentError(
        "--max_request_bytes must be at most 1 GiB (gRPC's message limit)");
  }
  if (l.default_page_size == 0 || l.default_page_size > l.max_page_size) {
    return absl::InvalidArgumentError(
        "--default_page_size must be between 1 and --max_page_size");
  }
  if (l.max_batch == 0) return absl::InvalidArgumentError("--max_batch must be at least 1");
  if (l.max_pending == 0) {
    return absl::InvalidArgumentError("--max_pending must be at least 1");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status GatewayServerOptions::Validate() const {
  if (absl::Status status = serving.Validate(); !status.ok()) return status;
  if (absl::Status status = CheckLimits(limits); !status.ok()) return status;
  if (read_connections == 0) {
    return absl::InvalidArgumentError("--read_connections must be at least 1");
  }
  if (session_limits.max_in_flight == 0) {
    return absl::InvalidArgumentError("--max_stream_in_flight must be at least 1");
  }
  if (max_sessions == 0) {
    return absl::InvalidArgumentError("--max_sessions must be at least 1");
  }
  if (storage.empty()) {
    if (db_path.empty()) return absl::InvalidArgumentError("--db must not be empty");
    return absl::OkStatus();
  }
  absl::StatusOr<PostgresTarget> target = PostgresTarget::Parse(storage);
  if (!target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--storage: ", target.status().message()));
  }
  if (limits.max_resource_bytes + limits.max_key_bytes > kPostgresMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "with PostgreSQL storage, --max_resource_bytes + --max_key_bytes must be at most ",
        kPostgresMaxNameBytes, " (PostgreSQL's index entries hold at most 2704 bytes)"));
  }
  return absl::OkStatus();
}

GatewayServerOptions GatewayServerOptions::FromFlags() {
  return ServerOptionsFromFlags<GatewayServerOptions>();
}

std::string GatewayServerOptions::Describe() const {
  return DescribeServerOptions(*this);
}

}  // namespace fencegate::gateway
