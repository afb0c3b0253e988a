// HealthService: gRPC's health protocol (grpc.health.v1.Health, Check and
// Watch) on a server's completion-queue loop (completion_queue_loop.h),
// in place of gRPC's default health service, which runs on the callback
// API and would bring that API's threads into the loop's process (they
// poll the same connections; docs/benchmarks-analysis.md measures it).
//
// What it answers, as gRPC's default does: the server as a whole (service
// "") is SERVING from the start and NOT_SERVING after Shutdown(); a name
// it does not know is NOT_FOUND to Check and SERVICE_UNKNOWN to Watch. A
// Watch gets the status at once and then each change (the latest, when
// several come while one is being sent), until the client cancels or
// Shutdown() ends it.
//
// Ownership: register service() with the server's builder; the
// HealthService must outlive the server and its loop.
// Errors: a request that does not parse is INVALID_ARGUMENT naming its
// type, on either method.
// Thread safety: SetServing() and Shutdown() from any thread; the rest on
// the loop's thread.
#ifndef FENCEGATE_COMMON_SERVER_HEALTH_SERVICE_H_
#define FENCEGATE_COMMON_SERVER_HEALTH_SERVICE_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/server/cq_unary.h"
#include "common/server/cq_write_stream.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/completion_queue.h"

namespace fencegate {

class HealthService {
 public:
  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;

  HealthService();
  ~HealthService();

  grpc::Service* service() { return &service_; }
  // Accepts Check and Watch calls on `cq`, whose loop runs them. Once,
  // after the server started and before its loop runs.
  void Serve(grpc::ServerCompletionQueue* cq);

  // The server's status as a whole: SERVING (true) or NOT_SERVING.
  void SetServing(bool serving);
  // NOT_SERVING for good: sent to every Watch, which then ends (OK), and
  // later ones end at once after their first answer. Call before shutting
  // the server down, so that no Watch holds the shutdown up.
  void Shutdown();

 private:
  class Watch;

  // The status of `service` (the request's name); false if unknown.
  bool StatusOf(const std::string& service, Status* status);
  bool StatusOfLocked(const std::string& service, Status* status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Both on raw bytes, each parsed by its method (cq_unary.h,
  // cq_write_stream.h): a request that does not parse is INVALID_ARGUMENT.
  grpc::health::v1::Health::WithRawMethod_Check<
      grpc::health::v1::Health::WithRawMethod_Watch<grpc::health::v1::Health::Service>>
      service_;
  std::unique_ptr<CqUnaryMethod<grpc::health::v1::HealthCheckRequest,
                                grpc::health::v1::HealthCheckResponse>>
      check_;
  std::unique_ptr<CqWriteStreamMethod<grpc::health::v1::HealthCheckRequest,
                                      grpc::health::v1::HealthCheckResponse>>
      watch_;

  absl::Mutex mu_;
  bool serving_ ABSL_GUARDED_BY(mu_) = true;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<Watch*> watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_HEALTH_SERVICE_H_
