// What every fencegate gRPC server has, set up in one place: the options
// both servers take (ServingOptions: address, TLS, signing keys, port file,
// shutdown grace), what their mains drive (ServerControl), the gRPC health
// service, server reflection (so grpcurl can list and call the API),
// fencegate.v1.ServerInfo (its version; server_info_service.h), a
// file that publishes the bound port (listen on port 0 in tests, then read
// the port from the file), and INVALID_ARGUMENT for requests that do not
// parse (malformed_request_interceptor.h). The flags that fill
// ServingOptions and the mains' signal loop are in server_main.h.
//
// Metrics and the status page (ServingOptions::metrics_listen, the
// ServerObservability a server passes to StartGrpcServer) are in
// server_observability.h.
//
// Thread safety: call from the thread that builds the server.
#ifndef FENCEGATE_COMMON_SERVER_SERVER_SETUP_H_
#define FENCEGATE_COMMON_SERVER_SERVER_SETUP_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/server/tls.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace fencegate {

// The options both servers take, each filled from the flag of the same name
// (server_main.h). Each server's Options holds one, with its own default
// address.
struct ServingOptions {
  // --listen: host:port; port 0 picks a free port (see port_file).
  std::string listen;
  // --port_file: if set, the bound port is written here once serving.
  std::string port_file;
  // --shutdown_grace: how long Shutdown() lets calls in flight finish
  // before cancelling them.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // --signing_keys: key file (common/signing/signing_keys.h); set = signed
  // tokens.
  std::string signing_keys_path;
  // --tls_cert, --tls_key, --tls_client_ca (common/server/tls.h).
  ServerTlsFiles tls;
  // --policy: policy file (common/authz/policy.h); set = every call is
  // checked against it for the client certificate's subject. Needs mutual
  // TLS (tls.client_ca). Empty: everything is allowed.
  std::string policy_path;
  // --metrics_listen: host:port of the HTTP listener for /metrics and the
  // status page (server_observability.h), with TLS as the gRPC port when
  // `tls` is on. kMetricsListenAuto: on loopback, at metrics_auto_port when
  // it is free and at a free port otherwise (ServerObservability), or at a
  // free port at once when `listen` asks for one (port 0), so servers on one
  // host never share a metrics port. Empty: metrics off altogether (no listener,
  // no counting; ServerInfo.GetMetrics answers FAILED_PRECONDITION).
  std::string metrics_listen = kMetricsListenAuto;
  // The port kMetricsListenAuto means; each server's Options sets its own.
  int metrics_auto_port = 0;
  // --metrics_port_file: if set, the bound metrics port is written here
  // once serving (as --port_file does for gRPC).
  std::string metrics_port_file;

  static constexpr char kMetricsListenAuto[] = "auto";

  // The metrics address metrics_listen stands for; empty when off.
  std::string MetricsAddress() const;

  // INVALID_ARGUMENT naming the flag when a value cannot work. Reads no
  // file (Start() reads them, and names the flag if one is unreadable).
  absl::Status Validate() const;
};

// What a server's main() drives once the server started: reload on SIGHUP,
// shut down on SIGTERM/SIGINT (server_main.h). Both servers implement it.
class ServerControl {
 public:
  virtual ~ServerControl() = default;
  // Re-reads the key file; on error the keys in use stay and the error is
  // returned; without signing, FAILED_PRECONDITION.
  virtual absl::Status ReloadSigningKeys() = 0;
  // The keys in use, for logs ("k1 (sign), k2"), or "off".
  virtual std::string DescribeSigning() const = 0;
  // Re-reads the policy file (--policy); on error the policy in force
  // stays, the failure is counted and returned; without a policy,
  // FAILED_PRECONDITION.
  virtual absl::Status ReloadPolicy() = 0;
  // The policy in force, for logs ("<path> (3 rules)"), or "off".
  virtual std::string DescribePolicy() const = 0;
  // Stops taking calls, answers what waits (streams, parked Acquires) with
  // UNAVAILABLE, lets unary calls in flight finish (up to the shutdown
  // grace) and returns as soon as none is left: clients' idle connections
  // do not hold it (grpc_shutdown.h). Idempotent.
  virtual void Shutdown() = 0;
};

// Enables health checking and reflection for every server built after the
// call. Idempotent and thread-safe.
void EnableHealthAndReflection();

class HealthService;
class ServerObservability;
class UnaryCallCounter;

// What a server whose methods run on a completion-queue loop
// (completion_queue_loop.h) needs from its builder: its own health service
// registered in place of gRPC's default (which is on the callback API), and
// the queue.
struct CompletionQueueServing {
  HealthService* health;
  std::unique_ptr<grpc::ServerCompletionQueue>* cq;  // set by StartGrpcServer
};

// Builds and starts a server on `listen` serving `service`, with health,
// reflection and ServerInfo, `credentials` (null: plaintext; see
// common/server/tls.h) and a receive limit of `max_receive_bytes` (0: gRPC's
// default). Sets *port to the bound port and publishes it in `port_file` (if
// not empty). With `observability`, its ServerInfo (with the server's metrics)
// and its per-RPC metrics; without, a ServerInfo with metrics off.
// UNAVAILABLE naming --listen if it cannot listen, a port another process
// listens on included (port reuse is off: no two servers share a port).
// `service` and
// `observability` must outlive the server. With `unary_calls`, the
// server's unary calls are counted there, for ShutdownGrpcServer()
// (grpc_shutdown.h); it must outlive the server too. With `queue_serving`,
// its health service and a completion queue (see there).
absl::StatusOr<std::unique_ptr<grpc::Server>> StartGrpcServer(
    const std::string& listen, grpc::Service* service, int* port,
    const std::string& port_file, int max_receive_bytes = 0,
    std::shared_ptr<grpc::ServerCredentials> credentials = nullptr,
    ServerObservability* observability = nullptr, UnaryCallCounter* unary_calls = nullptr,
    const CompletionQueueServing* queue_serving = nullptr);

// Writes "<port>\n" to `path` atomically (temp file + rename), so a reader
// never sees a partial number. No-op when `path` is empty.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_SERVER_SETUP_H_
