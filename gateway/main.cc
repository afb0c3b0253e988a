// fencegate-gateway: fenced storage over gRPC. Refuses any write whose
// fencing token is older than the newest one seen for its resource.
// Flags fill GatewayServerOptions; everything else is in gateway_server.h.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "common/build_info.h"
#include "common/log.h"
#include "common/signals.h"
#include "gateway/gateway_server.h"

namespace {
const fencegate::gateway::GatewayServerOptions kDefaults;
const fencegate::gateway::GatewayLimits& kLimits = kDefaults.limits;
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.listen,
          "host:port to serve on; port 0 picks a free port");
ABSL_FLAG(std::string, db, kDefaults.db_path,
          "SQLite database file holding fences and objects (created if missing)");
ABSL_FLAG(std::string, storage, kDefaults.storage,
          "empty: SQLite (--db); or a PostgreSQL connection URI, "
          "postgres://user@host:port/db?..., which several gateways may share");
ABSL_FLAG(std::string, port_file, "",
          "if set, write the bound port to this file once serving");
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
ABSL_FLAG(size_t, read_connections, kDefaults.read_connections,
          "read-only storage connections for plain reads, List and Describe");
ABSL_FLAG(absl::Duration, shutdown_grace, kDefaults.shutdown_grace,
          "on SIGTERM/SIGINT, how long calls in flight may finish");
ABSL_FLAG(std::string, signing_keys, "",
          "key file (docs/security.md); set = a token needs a valid signature "
          "for its resource. SIGHUP reloads it");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain; with --tls_key turns TLS on");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle; set = mutual TLS: clients must present a certificate it signed");
ABSL_FLAG(std::string, lockservice, "",
          "grant-time fencing: host:port of the lock service whose grants and "
          "expiries raise the fences here at once; empty = off");
ABSL_FLAG(std::string, lockservice_tls_ca, "",
          "PEM CA that signed the lock service's certificate (TLS to --lockservice)");
ABSL_FLAG(std::string, lockservice_tls_cert, "",
          "client certificate for mutual TLS to --lockservice");
ABSL_FLAG(std::string, lockservice_tls_key, "", "private key of --lockservice_tls_cert");

namespace {

// Settings that cannot work; empty when all is well.
std::string CheckOptions(const fencegate::gateway::GatewayServerOptions& o) {
  const fencegate::gateway::GatewayLimits& l = o.limits;
  if (l.max_resource_bytes == 0 || l.max_key_bytes == 0) {
    return "--max_resource_bytes and --max_key_bytes must be at least 1";
  }
  if (l.max_mutations == 0) return "--max_mutations must be at least 1";
  if (l.max_request_bytes < l.max_value_bytes) {
    return "--max_request_bytes must be at least --max_value_bytes";
  }
  if (l.max_request_bytes > (1u << 30)) {
    return "--max_request_bytes must be at most 1 GiB (gRPC's message limit)";
  }
  if (l.default_page_size == 0 || l.default_page_size > l.max_page_size) {
    return "--default_page_size must be between 1 and --max_page_size";
  }
  if (l.max_batch == 0) return "--max_batch must be at least 1";
  if (l.max_pending == 0) return "--max_pending must be at least 1";
  if (o.read_connections == 0) return "--read_connections must be at least 1";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  fencegate::BlockShutdownSignals();  // before any thread starts
  fencegate::InitBuildInfo("fencegate-gateway");
  absl::SetProgramUsageMessage(
      "fencegate-gateway: fenced storage over gRPC.\n"
      "Usage: fencegate-gateway [--listen=127.0.0.1:7071] [--db=FILE | "
      "--storage=postgres://...] ...");
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil checks every mutex acquisition for lock-order cycles, a
  // few percent of the server's CPU under load. Tests keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  fencegate::gateway::GatewayServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.db_path = absl::GetFlag(FLAGS_db);
  options.storage = absl::GetFlag(FLAGS_storage);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  options.read_connections = absl::GetFlag(FLAGS_read_connections);
  options.signing_keys_path = absl::GetFlag(FLAGS_signing_keys);
  options.tls.cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls.key = absl::GetFlag(FLAGS_tls_key);
  options.tls.client_ca = absl::GetFlag(FLAGS_tls_client_ca);
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
  if (std::string problem = CheckOptions(options); !problem.empty()) {
    fencegate::LogError("%s", problem);
    return EXIT_FAILURE;
  }

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
      "max_page_size=%d max_batch=%d max_pending=%d read_connections=%d "
      "shutdown_grace=%s max_receive_message_bytes=%d transport=%s signing=%s "
      "grant_time_fencing=%s)",
      fencegate::VersionLine(), (*server)->port(), options.listen,
      (*server)->storage_description(),
      limits.max_resource_bytes, limits.max_key_bytes, limits.max_value_bytes,
      limits.max_mutations, limits.max_request_bytes, limits.default_page_size,
      limits.max_page_size, limits.max_batch, limits.max_pending,
      options.read_connections, absl::FormatDuration(options.shutdown_grace),
      fencegate::gateway::MaxReceiveMessageBytes(limits),
      fencegate::DescribeTls(options.tls), (*server)->DescribeSigning(),
      options.lockservice.empty() ? std::string("off")
                                  : "following " + options.lockservice);

  int signal = fencegate::WaitForShutdownSignal([&server] {
    absl::Status reloaded = (*server)->ReloadSigningKeys();
    if (reloaded.ok()) {
      fencegate::LogInfo("SIGHUP: signing keys reloaded: %s",
                         (*server)->DescribeSigning());
    } else {
      fencegate::LogError("SIGHUP: keys not reloaded, the old ones stay: %s",
                          reloaded.ToString());
    }
  });
  fencegate::LogInfo("signal %d: shutting down", signal);
  (*server)->Shutdown();
  fencegate::LogInfo("fencegate-gateway stopped cleanly");
  return EXIT_SUCCESS;
}
