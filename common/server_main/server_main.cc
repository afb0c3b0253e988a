#include "common/server_main/server_main.h"

#include <cstdlib>
#include <utility>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "common/build_info/build_info.h"
#include "common/base/log.h"
#include "common/server_main/option_flags.h"
#include "common/core/signals.h"

// The flags both servers take, each bound to the ServingOptions field it
// fills (option_flags.h). Each main binds --listen itself: its default
// differs by server.
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, std::string, port_file, port_file,
                      "if set, write the bound gRPC port to this file once serving");
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, absl::Duration, shutdown_grace,
                      shutdown_grace,
                      "on SIGTERM/SIGINT, how long calls in flight may finish");
FENCEGATE_OPTION_FLAG(
    fencegate::ServingOptions, std::string, signing_keys, signing_keys_path,
    "key file (docs/security.md); set = signed tokens: the lock service signs every "
    "grant and requires the signature on Renew/Release, the gateway requires a valid "
    "signature for the token's resource. SIGHUP reloads it");
FENCEGATE_OPTION_FLAG(
    fencegate::ServingOptions, std::string, metrics_listen, metrics_listen,
    "host:port of the HTTP listener for Prometheus' /metrics and the status page at / "
    "(TLS as the gRPC port); 'auto': 127.0.0.1 at the server's metrics port (lock "
    "service 9464, gateway 9465) when it is free, else a free port (always when "
    "--listen's port is 0); the start-up line says which; empty: metrics off "
    "(docs/observability.md)");
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, std::string, metrics_port_file,
                      metrics_port_file,
                      "if set, write the bound metrics port to this file once serving");
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, std::string, tls_cert, tls.cert,
                      "PEM certificate chain; with --tls_key turns TLS on");
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, std::string, tls_key, tls.key,
                      "PEM private key of --tls_cert");
FENCEGATE_OPTION_FLAG(fencegate::ServingOptions, std::string, tls_client_ca,
                      tls.client_ca,
                      "PEM CA bundle; set = mutual TLS: clients must present a "
                      "certificate it signed (the lock service makes its subject the "
                      "lease holder)");
FENCEGATE_OPTION_FLAG(
    fencegate::ServingOptions, std::string, policy, policy_path,
    "policy file (docs/security.md, \"Authorization\"); set = every call is checked "
    "against it for the client certificate's subject, PERMISSION_DENIED if not "
    "granted. Needs mutual TLS (--tls_client_ca). SIGHUP reloads it");

namespace fencegate {
namespace {

// --help lists the flags of the server's main.cc and of this file, not
// those of the libraries (Abseil's default looks for a file named after
// the binary, which matches none).
bool IsServerFlagFile(absl::string_view file) {
  return absl::EndsWith(file, "/main.cc") || absl::EndsWith(file, "/server_main.cc");
}

}  // namespace

void InitServerMain(absl::string_view program, int argc, char** argv,
                    absl::string_view usage) {
  BlockShutdownSignals();  // before any thread starts
  absl::FlagsUsageConfig config;
  config.contains_helpshort_flags = IsServerFlagFile;
  config.contains_help_flags = IsServerFlagFile;
  InitBuildInfo(program, std::move(config));  // and --version (build_info.h)
  absl::SetProgramUsageMessage(usage);
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil checks every mutex acquisition for lock-order cycles,
  // about 3% of the server's CPU under load. Tests keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

int ServeUntilShutdownSignal(absl::string_view program, ServerControl& server) {
  int signal = WaitForShutdownSignal([&server] {
    absl::Status reloaded = server.ReloadSigningKeys();
    if (reloaded.ok()) {
      LogInfo("SIGHUP: signing keys reloaded: %s", server.DescribeSigning());
    } else {
      LogError("SIGHUP: keys not reloaded, the old ones stay: %s", reloaded.ToString());
    }
    absl::Status policy = server.ReloadPolicy();
    if (policy.ok()) {
      LogInfo("SIGHUP: policy reloaded: %s", server.DescribePolicy());
    } else if (!absl::IsFailedPrecondition(policy)) {  // no --policy: nothing to say
      LogError("SIGHUP: policy not reloaded, the one in force stays: %s",
               policy.ToString());
    }
  });
  LogInfo("signal %d: shutting down", signal);
  server.Shutdown();
  LogInfo("%s stopped cleanly", program);
  return EXIT_SUCCESS;
}

}  // namespace fencegate
