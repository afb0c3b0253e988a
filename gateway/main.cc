// fencegate-gateway: fenced storage over gRPC. Refuses any write whose
// fencing token is older than the newest one seen for its resource.
// Each flag below fills its field of GatewayServerOptions (option_flags.h;
// the flags both servers take are in common/server_main/server_main.cc);
// everything else is in gateway_server.h.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/build_info/build_info.h"
#include "common/base/log.h"
#include "common/server_main/option_flags.h"
#include "common/server_main/server_main.h"
#include "common/server/tls.h"
#include "gateway/gateway_server.h"

using Options = fencegate::gateway::GatewayServerOptions;

FENCEGATE_OPTION_FLAG(Options, std::string, listen, serving.listen,
                      fencegate::kListenFlagHelp);
FENCEGATE_OPTION_FLAG(
    Options, std::string, db, db_path,
    "SQLite database file holding fences and objects (created if missing)");
FENCEGATE_OPTION_FLAG_UNDESCRIBED(
    Options, std::string, storage, storage,
    "empty: SQLite (--db); or a PostgreSQL connection URI, "
    "postgres://user@host:port/db?..., which several gateways may share");
FENCEGATE_OPTION_FLAG(Options, size_t, max_resource_bytes, limits.max_resource_bytes,
                      "longest resource name, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_key_bytes, limits.max_key_bytes,
                      "longest key, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_value_bytes, limits.max_value_bytes,
                      "largest value, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_mutations, limits.max_mutations,
                      "most mutations in one MultiWrite");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_request_bytes, limits.max_request_bytes,
    "most bytes of keys plus values in one MultiWrite (>= max_value_bytes)");
FENCEGATE_OPTION_FLAG(Options, uint32_t, default_page_size, limits.default_page_size,
                      "keys per List page when the request asks for 0");
FENCEGATE_OPTION_FLAG(Options, uint32_t, max_page_size, limits.max_page_size,
                      "most keys per List page");
FENCEGATE_OPTION_FLAG(Options, size_t, max_batch, limits.max_batch,
                      "most requests committed in one group-commit transaction");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_pending, limits.max_pending,
    "requests waiting to commit before new ones get RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(
    Options, size_t, fence_cache_resources, limits.fence_cache_resources,
    "SQLite only: resources whose committed fence is kept in memory to refuse "
    "stale tokens at once, without a commit; 0 = off");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_stream_in_flight, session_limits.max_in_flight,
    "requests of one Session stream waiting for their answers before new ones "
    "get RESOURCE_EXHAUSTED; also the most requests in one stream message, and "
    "how many unsent answers make the gateway stop reading a stream");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_sessions, max_sessions,
    "Session streams open at once; one more ends at once with RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(Options, size_t, read_connections, read_connections,
                      "read-only storage connections for plain reads, List and Describe");
FENCEGATE_OPTION_FLAG(
    Options, std::string, lockservice, lockservice,
    "grant-time fencing: host:port of the lock service whose grants and "
    "expiries raise the fences here at once; empty = off");
FENCEGATE_OPTION_FLAG(
    Options, std::string, lockservice_tls_ca, lockservice_tls.ca,
    "PEM CA that signed the lock service's certificate (TLS to --lockservice)");
FENCEGATE_OPTION_FLAG(Options, std::string, lockservice_tls_cert, lockservice_tls.cert,
                      "client certificate for mutual TLS to --lockservice");
FENCEGATE_OPTION_FLAG(Options, std::string, lockservice_tls_key, lockservice_tls.key,
                      "private key of --lockservice_tls_cert");

int main(int argc, char** argv) {
  fencegate::InitServerMain(
      "fencegate-gateway", argc, argv,
      "fenced storage over gRPC.\n"
      "Usage: fencegate-gateway [--listen=127.0.0.1:7071] [--db=FILE | "
      "--storage=postgres://...] ...");
  const Options options = Options::FromFlags();
  absl::StatusOr<std::unique_ptr<fencegate::gateway::GatewayServer>> server =
      fencegate::gateway::GatewayServer::Start(options);
  if (!server.ok()) {
    fencegate::LogError("fencegate-gateway failed to start: %s",
                        server.status().ToString());
    return EXIT_FAILURE;
  }
  // The flags as given (--storage as the server describes it: without a
  // password), then what the server made of them.
  fencegate::LogInfo(
      "%s serving on port %d (%s storage=%s max_receive_message_bytes=%d transport=%s "
      "signing=%s authorization=%s grant_time_fencing=%s metrics=%s)",
      fencegate::VersionLine(), (*server)->port(), options.Describe(),
      (*server)->storage_description(),
      fencegate::gateway::MaxReceiveMessageBytes(options.limits),
      fencegate::DescribeTls(options.serving.tls), (*server)->DescribeSigning(),
      (*server)->DescribePolicy(),
      options.lockservice.empty() ? std::string("off")
                                  : "following " + options.lockservice,
      (*server)->DescribeMetrics());
  return fencegate::ServeUntilShutdownSignal("fencegate-gateway", **server);
}
