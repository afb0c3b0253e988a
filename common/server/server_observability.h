// ServerObservability: what one fencegate server shows its operators, set
// up the same way for both servers (docs/observability.md):
//   - a metrics Registry with the build info (fencegate_build_info), the
//     standard process_ metrics and the per-RPC metrics (rpc_metrics.h);
//     the server adds its own;
//   - fencegate.v1.ServerInfo with GetMetrics (server_info_service.h), which
//     StartGrpcServer registers, with the RPC interceptor;
//   - the HTTP listener (http/http_listener.h) at ServingOptions::
//     MetricsAddress(), TLS as the gRPC port: GET /metrics (the exposition)
//     and GET / (the server's status page), its port published in
//     --metrics_port_file.
// With metrics off (ServingOptions::metrics_listen empty) there is no
// registry, no interceptor and no listener: registry() is null and the
// server counts nothing.
//
// Order: Create(), the server registers its metrics, StartGrpcServer(...,
// this), StartListener(); on shutdown StopListener() before the state the
// page and the collectors read goes away.
//
// Thread safety: Create/StartListener/StopListener from the thread that
// starts and stops the server; the rest is thread-safe.
#ifndef FENCEGATE_COMMON_SERVER_SERVER_OBSERVABILITY_H_
#define FENCEGATE_COMMON_SERVER_SERVER_OBSERVABILITY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/http/http_listener.h"
#include "common/metrics/registry.h"
#include "common/server/rpc_metrics.h"
#include "common/server/server_info_service.h"
#include "common/server/server_setup.h"

namespace fencegate {

// Renders the status page for one request (query parameters in `request`).
using StatusPageFn = std::function<HttpResponse(const HttpRequest& request)>;

class ServerObservability {
 public:
  // `services`: the full names of the services the server registers, for
  // the per-RPC metrics' method labels.
  explicit ServerObservability(const ServingOptions& serving,
                               const std::vector<std::string>& services);
  ~ServerObservability();  // StopListener()

  bool enabled() const { return registry_ != nullptr; }
  // The registry the server adds its metrics to; null when metrics are off.
  metrics::Registry* registry() const { return registry_.get(); }

  // For StartGrpcServer.
  grpc::Service* info_service() { return &info_; }
  // The policy ServerInfo's calls are checked against (server_policy.h);
  // before the server serves.
  void SetAuthorizer(const authz::Authorizer* authorizer) {
    info_.set_authorizer(authorizer);
  }
  // Null when metrics are off.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewRpcInterceptorFactory();

  // Listens (if metrics are on) and serves /metrics and `status_page` at
  // /; writes --metrics_port_file. With --metrics_listen=auto, the
  // server's default port when it is free and a free port otherwise
  // (DescribeListener() says which). UNAVAILABLE naming --metrics_listen if
  // it cannot listen (port reuse is off: a port another process listens on
  // is refused); INVALID_ARGUMENT if the TLS files do not load.
  absl::Status StartListener(StatusPageFn status_page);
  // The bound metrics port; 0 when off or not started.
  int metrics_port() const { return listener_ == nullptr ? 0 : listener_->port(); }
  // "http://127.0.0.1:9464/" (https with TLS), or "off", for logs; with
  // " (auto: 127.0.0.1:9464 was taken)" when auto fell back to a free port.
  std::string DescribeListener() const;
  // Stops the listener: a scrape or page in flight ends first. Idempotent.
  void StopListener();

 private:
  const ServingOptions serving_;
  const std::unique_ptr<metrics::Registry> registry_;  // null: metrics off
  std::string auto_port_taken_;  // the auto address that was taken, if any
  std::unique_ptr<RpcMetrics> rpc_;
  ServerInfoService info_;
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_SERVER_OBSERVABILITY_H_
