#include "common/server/server_setup.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/server/grpc_shutdown.h"
#include "common/server/health_service.h"
#include "common/server/malformed_request_interceptor.h"
#include "common/server/server_info_service.h"
#include "common/server/server_observability.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"

namespace fencegate {

absl::Status ServingOptions::Validate() const {
  if (listen.empty() || listen.rfind(':') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen='", listen, "' is not host:port (port 0 picks a free port)"));
  }
  if (shutdown_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--shutdown_grace must not be negative");
  }
  if (metrics_listen != kMetricsListenAuto && !metrics_listen.empty()) {
    const size_t colon = metrics_listen.rfind(':');
    int port = -1;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(metrics_listen.substr(colon + 1), &port) || port < 0 ||
        port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metrics_listen='", metrics_listen,
          "' is not host:port (port 0 picks a free port), 'auto' or empty (off)"));
    }
  }
  if (tls.enabled() && (tls.cert.empty() || tls.key.empty())) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls_cert and --tls_key (--tls_client_ca alone is not "
        "enough: the server needs a certificate of its own)");
  }
  if (!policy_path.empty() && !tls.mutual()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--policy=", policy_path,
        " needs mutual TLS: the policy judges client certificates' subjects; give "
        "--tls_cert, --tls_key and --tls_client_ca too (docs/security.md, "
        "\"Authorization\")"));
  }
  return absl::OkStatus();
}

std::string ServingOptions::MetricsAddress() const {
  if (metrics_listen != kMetricsListenAuto) return metrics_listen;
  const bool free_port =
      listen.size() >= 2 && listen.compare(listen.size() - 2, 2, ":0") == 0;
  return absl::StrCat("127.0.0.1:", free_port ? 0 : metrics_auto_port);
}

void EnableHealthAndReflection() {
  static std::once_flag once;
  std::call_once(once, [] {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  });
}

absl::StatusOr<std::unique_ptr<grpc::Server>> StartGrpcServer(
    const std::string& listen, grpc::Service* service, int* port,
    const std::string& port_file, int max_receive_bytes,
    std::shared_ptr<grpc::ServerCredentials> credentials,
    ServerObservability* observability, UnaryCallCounter* unary_calls,
    const CompletionQueueServing* queue_serving) {
  EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(
      listen, credentials ? credentials : grpc::InsecureServerCredentials(), port);
  if (max_receive_bytes > 0) builder.SetMaxReceiveMessageSize(max_receive_bytes);
  // gRPC sets SO_REUSEPORT on Linux by default: a second server on a taken
  // port would then start and share the port's connections with the first.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Long-lived streams (WatchFences) are kept alive by client pings every
  // 10 s; gRPC's default would treat those as abuse (one per 5 minutes).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.RegisterService(service);
  static ServerInfoService* const metrics_off = new ServerInfoService(nullptr);
  builder.RegisterService(observability != nullptr ? observability->info_service()
                                                   : metrics_off);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(std::make_unique<MalformedRequestInterceptorFactory>());
  if (unary_calls != nullptr) interceptors.push_back(unary_calls->NewFactory());
  // After it: a status it replaces is counted as replaced.
  if (observability != nullptr) {
    if (auto rpc = observability->NewRpcInterceptorFactory()) {
      interceptors.push_back(std::move(rpc));
    }
  }
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  if (queue_serving != nullptr) {
    // No default health service for this server: ours answers instead.
    builder.SetOption(
        std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
    builder.RegisterService(queue_serving->health->service());
    *queue_serving->cq = builder.AddCompletionQueue();
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", listen,
        "; is the address valid and the port free? (--listen)"));
  }
  absl::Status status = WritePortFile(port_file, *port);
  if (!status.ok()) return status;
  return server;
}

absl::Status WritePortFile(const std::string& path, int port) {
  if (path.empty()) return absl::OkStatus();
  std::string temp = absl::StrCat(path, ".tmp");
  std::FILE* file = std::fopen(temp.c_str(), "w");
  if (file == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot write port file ", temp));
  }
  std::string text = absl::StrCat(port, "\n");
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write port file ", path));
  }
  return absl::OkStatus();
}

}  // namespace fencegate
