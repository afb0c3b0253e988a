// RpcMetrics: per-method gRPC metrics of one server, kept by a server
// interceptor (StartGrpcServer installs it when metrics are on):
//
//   fencegate_grpc_server_handled_total{grpc_service,grpc_method,grpc_code}
//       calls finished, by status code (OK, ABORTED, ...)
//   fencegate_grpc_server_handling_seconds{grpc_service,grpc_method}
//       unary calls: from the call's arrival to its status being sent
//   fencegate_grpc_server_in_flight{grpc_service,grpc_method}
//       calls (and streams) begun and not yet finished
//
// Labels stay bounded: the methods are those of the services named at
// construction (resolved through the protobuf descriptors) plus gRPC's
// health and reflection services; any other method counts as
// grpc_service="other", grpc_method="other". A code's counter is made the
// first time a method finishes with it. Calls inside a stream (the Session
// streams) are not calls of gRPC's: each stream counts once, when it ends;
// their requests are counted by the servers' own metrics.
//
// Cost per call: one interceptor (gRPC allocates it), a pointer compare
// per known method to find the method, two relaxed atomic adds and one
// histogram observation.
//
// Ownership: the server's Registry must outlive this; this must outlive
// the gRPC server. Thread safety: thread-safe.
#ifndef FENCEGATE_COMMON_SERVER_RPC_METRICS_H_
#define FENCEGATE_COMMON_SERVER_RPC_METRICS_H_

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics/registry.h"
#include "grpcpp/support/server_interceptor.h"

namespace fencegate {

class RpcMetrics {
 public:
  // `services`: full names of the services the server registers, e.g.
  // "fencegate.v1.Gateway" (fencegate.v1.ServerInfo is always added).
  RpcMetrics(metrics::Registry& registry, const std::vector<std::string>& services);

  // For ServerBuilder::experimental().SetInterceptorCreators().
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewFactory();

  // What one method keeps. Public for the interceptor.
  struct Method {
    std::string path;  // "/fencegate.v1.Gateway/Write"
    std::string service;
    std::string name;
    bool unary = true;
    std::atomic<const char*> seen{nullptr};  // gRPC's pointer to `path`, once seen
    metrics::Gauge* in_flight = nullptr;
    metrics::Histogram* latency = nullptr;                     // unary only
    std::array<std::atomic<metrics::Counter*>, 17> handled{};  // by grpc::StatusCode
  };

  // The method gRPC calls `path` (its registered name), or the "other" one.
  Method& Find(const char* path);
  // The counter of `method` finishing with `code` (made on first use).
  metrics::Counter& Handled(Method& method, int code);

 private:
  Method& Add(const std::string& service, const std::string& name, bool unary);

  metrics::Family<metrics::Counter>& handled_;
  metrics::Family<metrics::Histogram>& latency_;
  metrics::Family<metrics::Gauge>& in_flight_;
  std::deque<Method> methods_;  // fixed after construction; the last is "other"
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_RPC_METRICS_H_
