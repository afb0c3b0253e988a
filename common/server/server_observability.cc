#include "common/server/server_observability.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/build_info/build_info.h"
#include "common/metrics/process_metrics.h"

namespace fencegate {
namespace {

std::unique_ptr<metrics::Registry> NewRegistry(const ServingOptions& serving) {
  if (serving.MetricsAddress().empty()) return nullptr;
  auto registry = std::make_unique<metrics::Registry>();
  registry
      ->AddGauge("fencegate_build_info",
                 "Always 1; its labels say which build runs (--version).",
                 {"program", "version", "git_sha"})
      .Get({ProgramName(), std::string(ProjectVersion()), std::string(GitSha())})
      .Set(1);
  metrics::AddProcessMetrics(*registry);
  return registry;
}

}  // namespace

ServerObservability::ServerObservability(const ServingOptions& serving,
                                         const std::vector<std::string>& services)
    : serving_(serving), registry_(NewRegistry(serving)), info_(registry_.get()) {
  if (registry_ != nullptr) rpc_ = std::make_unique<RpcMetrics>(*registry_, services);
}

ServerObservability::~ServerObservability() { StopListener(); }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ServerObservability::NewRpcInterceptorFactory() {
  return rpc_ == nullptr ? nullptr : rpc_->NewFactory();
}

absl::Status ServerObservability::StartListener(StatusPageFn status_page) {
  if (registry_ == nullptr) return absl::OkStatus();
  HttpListenerOptions options;
  options.listen = serving_.MetricsAddress();
  options.tls.cert = serving_.tls.cert;
  options.tls.key = serving_.tls.key;
  options.tls.client_ca = serving_.tls.client_ca;
  metrics::Registry* registry = registry_.get();
  std::map<std::string, HttpHandler> routes;
  routes["/metrics"] = [registry](const HttpRequest&) {
    HttpResponse response;
    response.content_type = metrics::kExpositionContentType;
    response.body = registry->Render();
    return response;
  };
  routes["/"] = std::move(status_page);
  absl::StatusOr<std::unique_ptr<HttpListener>> listener =
      HttpListener::Start(options, routes);
  // "auto" takes its default port when it is free, a free port otherwise:
  // two servers of a host never share one port (nor its scrapes).
  const std::string auto_port_only = "127.0.0.1:0";
  if (!listener.ok() && absl::IsUnavailable(listener.status()) &&
      serving_.metrics_listen == ServingOptions::kMetricsListenAuto &&
      options.listen != auto_port_only) {
    auto_port_taken_ = options.listen;
    options.listen = auto_port_only;
    listener = HttpListener::Start(std::move(options), std::move(routes));
  }
  if (!listener.ok()) return listener.status();
  listener_ = *std::move(listener);
  return WritePortFile(serving_.metrics_port_file, listener_->port());
}

std::string ServerObservability::DescribeListener() const {
  if (listener_ == nullptr) return "off";
  const std::string address = serving_.MetricsAddress();
  std::string description =
      absl::StrCat(serving_.tls.enabled() ? "https://" : "http://",
                   address.substr(0, address.rfind(':')), ":", listener_->port(), "/");
  if (!auto_port_taken_.empty()) {
    absl::StrAppend(&description, " (auto: ", auto_port_taken_, " was taken)");
  }
  return description;
}

void ServerObservability::StopListener() {
  if (listener_ != nullptr) listener_->Stop();
}

}  // namespace fencegate
