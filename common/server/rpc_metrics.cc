#include "common/server/rpc_metrics.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace fencegate {
namespace {

using ::grpc::experimental::InterceptionHookPoints;

// grpc::StatusCode's names, as they appear in grpc_code.
constexpr const char* kCodeNames[17] = {"OK",
                                        "CANCELLED",
                                        "UNKNOWN",
                                        "INVALID_ARGUMENT",
                                        "DEADLINE_EXCEEDED",
                                        "NOT_FOUND",
                                        "ALREADY_EXISTS",
                                        "PERMISSION_DENIED",
                                        "RESOURCE_EXHAUSTED",
                                        "FAILED_PRECONDITION",
                                        "ABORTED",
                                        "OUT_OF_RANGE",
                                        "UNIMPLEMENTED",
                                        "INTERNAL",
                                        "UNAVAILABLE",
                                        "DATA_LOSS",
                                        "UNAUTHENTICATED"};

class RpcInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcInterceptor(RpcMetrics* metrics, RpcMetrics::Method* method)
      : metrics_(metrics), method_(method), start_(std::chrono::steady_clock::now()) {
    method_->in_flight->Add(1);
  }
  ~RpcInterceptor() override {
    if (!finished_) method_->in_flight->Add(-1);  // ended without a status
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (!finished_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      finished_ = true;
      if (method_->latency != nullptr) method_->latency->ObserveSince(start_);
      method_->in_flight->Add(-1);
      metrics_->Handled(*method_, static_cast<int>(methods->GetSendStatus().error_code()))
          .Increment();
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* const metrics_;
  RpcMetrics::Method* const method_;
  const std::chrono::steady_clock::time_point start_;
  bool finished_ = false;
};

class RpcInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcInterceptorFactory(RpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcInterceptor(metrics_, &metrics_->Find(info->method()));
  }

 private:
  RpcMetrics* const metrics_;
};

}  // namespace

RpcMetrics::RpcMetrics(metrics::Registry& registry,
                       const std::vector<std::string>& services)
    : handled_(registry.AddCounter(
          "fencegate_grpc_server_handled_total",
          "gRPC calls (and streams) the server finished, by method and status code.",
          {"grpc_service", "grpc_method", "grpc_code"})),
      latency_(registry.AddHistogram(
          "fencegate_grpc_server_handling_seconds",
          "Unary gRPC calls: time from arrival to the status being sent.",
          metrics::LatencyBounds(), {"grpc_service", "grpc_method"})),
      in_flight_(registry.AddGauge("fencegate_grpc_server_in_flight",
                                   "gRPC calls and streams begun and not yet finished.",
                                   {"grpc_service", "grpc_method"})) {
  std::vector<std::string> all = services;
  all.push_back("fencegate.v1.ServerInfo");
  for (const std::string& service : all) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    if (descriptor == nullptr) continue;
    for (int i = 0; i < descriptor->method_count(); ++i) {
      const google::protobuf::MethodDescriptor* m = descriptor->method(i);
      Add(service, m->name(), !m->client_streaming() && !m->server_streaming());
    }
  }
  // Compiled into gRPC itself, not into the protobuf pool.
  Add("grpc.health.v1.Health", "Check", true);
  Add("grpc.health.v1.Health", "Watch", false);
  Add("grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", false);
  Add("other", "other", false);
}

RpcMetrics::Method& RpcMetrics::Add(const std::string& service, const std::string& name,
                                    bool unary) {
  Method& m = methods_.emplace_back();
  m.path = absl::StrCat("/", service, "/", name);
  m.service = service;
  m.name = name;
  m.unary = unary;
  m.in_flight = &in_flight_.Get({service, name});
  if (unary) m.latency = &latency_.Get({service, name});
  return m;
}

RpcMetrics::Method& RpcMetrics::Find(const char* path) {
  // gRPC hands every call of a method the same pointer to its name.
  for (Method& m : methods_) {
    if (m.seen.load(std::memory_order_relaxed) == path) return m;
  }
  if (path != nullptr) {
    for (Method& m : methods_) {
      if (m.path == path) {
        m.seen.store(path, std::memory_order_relaxed);
        return m;
      }
    }
  }
  return methods_.back();
}

metrics::Counter& RpcMetrics::Handled(Method& method, int code) {
  if (code < 0 || code >= 17) code = 2;  // UNKNOWN
  metrics::Counter* counter = method.handled[code].load(std::memory_order_acquire);
  if (counter == nullptr) {
    counter = &handled_.Get({method.service, method.name, kCodeNames[code]});
    method.handled[code].store(counter, std::memory_order_release);
  }
  return *counter;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetrics::NewFactory() {
  return std::make_unique<RpcInterceptorFactory>(this);
}

}  // namespace fencegate
