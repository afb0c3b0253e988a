// fencegate-gateway: fenced storage over gRPC. Refuses any write whose
// fencing token is older than the newest one seen for its resource.
// Flags fill GatewayServerOptions (those both servers take are in
// common/server_main/server_main.h); everything else is in gateway_server.h.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "common/base/log.h"
#include "common/build_info/build_info.h"
#include "common/server_main/server_main.h"
#include "gateway/gateway_server.h"

namespace {
const fencegate::gateway::GatewayServerOptions kDefaults;
const fencegate::gateway::GatewayLimits& kLimits = kDefaults.limits;
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.serving.listen, fencegate::kListenFlagHelp);
ABSL_FLAG(std::string, db, kDefaults.db_path,
          "SQLite database file holding fences and objects (created if missing)");
ABSL_FLAG(std::string, storage, kDefaults.storage,
          "empty: SQLite (--db); or a PostgreSQL connection URI, "
          "postgres://user@host:port/db?..., which several gateways may share");
ABSL_FLAG(size_t, max_resource_bytes, kLimits.max_resource_bytes,
          "longest resource name, in bytes");
ABSL_FLAG(size_t, max_key_bytes, kLimits.max_key_bytes, "longest key, in bytes");
ABSL_FLAG(size_t, max_value_bytes, kLimits.max_value_bytes,
          "largest value, in bytes");
ABSL_FLAG(size_t, max_mutations, kLimits.max_mutations,
          "most mutations in one MultiWrite");
ABSL_FLAG(size_t, max_request_bytes, kLimits.max_request_bytes,
          "most bytes of keys plus values in one MultiWrite (>= max_value_bytes)");
ABSL_FLAG(uint32_t, default_page_size, kLimits.default_page_size,
          "keys per List page when the request asks for 0");
ABSL_FLAG(uint32_t, max_page_size, kLimits.max_page_size,
          "most keys per List page");
ABSL_FLAG(size_t, max_batch, kLimits.max_batch,
          "most requests committed in one group-commit transaction");
ABSL_FLAG(size_t, max_pending, kLimits.max_pending,
          "requests waiting to commit before new ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(size_t, max_stream_in_flight, kDefaults.session_limits.max_in_flight,
          "requests of one Session stream waiting for their answers before new ones "
          "get RESOURCE_EXHAUSTED; also the most requests in one stream message, and "
          "how many unsent answers make the gateway stop reading a stream");
ABSL_FLAG(size_t, max_sessions, kDefaults.max_sessions,
          "Session streams open at once; one more ends at once with RESOURCE_EXHAUSTED");
ABSL_FLAG(size_t, read_connections, kDefaults.read_connections,
          "read-only storage connections for plain reads, List and Describe");
ABSL_FLAG(std::string, lockservice, "",
          "grant-time fencing: host:port of the lock service whose grants and "
          "expiries raise the fences here at once; empty = off");
ABSL_FLAG(std::string, lockservice_tls_ca, "",
          "PEM CA that signed the lock service's certificate (TLS to --lockservice)");
ABSL_FLAG(std::string, lockservice_tls_cert, "",
          "client certificate for mutual TLS to --lockservice");
ABSL_FLAG(std::string, lockservice_tls_key, "", "private key of --lockservice_tls_cert");

int main(int argc, char** argv) {
  fencegate::InitServerMain(
      "fencegate-gateway", argc, argv,
      "fenced storage over gRPC.\n"
      "Usage: fencegate-gateway [--listen=127.0.0.1:7071] [--db=FILE | "
      "--storage=postgres://...] ...");

  fencegate::gateway::GatewayServerOptions options;
  options.serving =
      fencegate::ServingOptionsFromFlags(absl::GetFlag(FLAGS_listen), options.serving);
  options.db_path = absl::GetFlag(FLAGS_db);
  options.storage = absl::GetFlag(FLAGS_storage);
  options.read_connections = absl::GetFlag(FLAGS_read_connections);
  options.lockservice = absl::GetFlag(FLAGS_lockservice);
  options.lockservice_tls.ca = absl::GetFlag(FLAGS_lockservice_tls_ca);
  options.lockservice_tls.cert = absl::GetFlag(FLAGS_lockservice_tls_cert);
  options.lockservice_tls.key = absl::GetFlag(FLAGS_lockservice_tls_key);
  fencegate::gateway::GatewayLimits& limits = options.limits;
  limits.max_resource_bytes = absl::GetFlag(FLAGS_max_resource_bytes);
  limits.max_key_bytes = absl::GetFlag(FLAGS_max_key_bytes);
  limits.max_value_bytes = absl::GetFlag(FLAGS_max_value_bytes);
  limits.max_mutations = absl::GetFlag(FLAGS_max_mutations);
  limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  limits.default_page_size = absl::GetFlag(FLAGS_default_page_size);
  limits.max_page_size = absl::GetFlag(FLAGS_max_page_size);
  limits.max_batch = absl::GetFlag(FLAGS_max_batch);
  limits.max_pending = absl::GetFlag(FLAGS_max_pending);
  options.session_limits.max_in_flight = absl::GetFlag(FLAGS_max_stream_in_flight);
  options.max_sessions = absl::GetFlag(FLAGS_max_sessions);

  absl::StatusOr<std::unique_ptr<fencegate::gateway::GatewayServer>> server =
      fencegate::gateway::GatewayServer::Start(options);
  if (!server.ok()) {
    fencegate::LogError("fencegate-gateway failed to start: %s",
                        server.status().ToString());
    return EXIT_FAILURE;
  }
  fencegate::LogInfo(
      "%s serving on port %d (listen=%s storage=%s "
      "max_resource_bytes=%d max_key_bytes=%d max_value_bytes=%d "
      "max_mutations=%d max_request_bytes=%d default_page_size=%d "
      "max_page_size=%d max_batch=%d max_pending=%d max_stream_in_flight=%d "
      "max_sessions=%d read_connections=%d "
      "shutdown_grace=%s max_receive_message_bytes=%d transport=%s signing=%s "
      "grant_time_fencing=%s metrics=%s)",
      fencegate::VersionLine(), (*server)->port(), options.serving.listen,
      (*server)->storage_description(), limits.max_resource_bytes, limits.max_key_bytes,
      limits.max_value_bytes, limits.max_mutations, limits.max_request_bytes,
      limits.default_page_size, limits.max_page_size, limits.max_batch,
      limits.max_pending, options.session_limits.max_in_flight, options.max_sessions,
      options.read_connections, absl::FormatDuration(options.serving.shutdown_grace),
      fencegate::gateway::MaxReceiveMessageBytes(limits),
      fencegate::DescribeTls(options.serving.tls), (*server)->DescribeSigning(),
      options.lockservice.empty() ? std::string("off")
                                  : "following " + options.lockservice,
      (*server)->DescribeMetrics());
  return fencegate::ServeUntilShutdownSignal("fencegate-gateway", **server);
}
