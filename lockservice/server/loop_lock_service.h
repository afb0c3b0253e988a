// LoopLockService: fencegate.v1.LockService on gRPC's asynchronous API,
// every call's events on the server's completion-queue loop
// (common/server/completion_queue_loop.h), handed to LockServiceCalls
// (lock_service_calls.h), which does the work. How a single instance on
// SQLite serves: the loop's thread reads every call and Session message,
// decides it, and at the end of each burst commits what the burst queued
// and sends the answers (common/server/commit_bursts.h), with no other
// thread woken for it. Unary methods and server streams on raw bytes
// (cq_unary.h, cq_write_stream.h), Session streams on CqStreams
// (cq_stream.h). A parked Acquire or Campaign watches for its client's
// cancellation; the other calls are answered without waiting long.
//
// Ownership: the service must outlive the server and its loop, and the
// manager's last commit (whose answers are operations on the loop's queue).
// Thread safety: Serve() once, before the loop runs; the calls run on the
// loop's thread, their answers come from the loop or the manager's commit.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOOP_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOOP_LOCK_SERVICE_H_

#include <memory>
#include <utility>
#include <vector>

#include "common/server/cq_unary.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/completion_queue.h"
#include "lockservice/server/lock_service_calls.h"

namespace fencegate::lockservice {

// Every method on the asynchronous API, on raw bytes.
using LockAsyncService = fencegate::v1::LockService::WithRawMethod_Acquire<
    fencegate::v1::LockService::WithRawMethod_Renew<
        fencegate::v1::LockService::WithRawMethod_Release<
            fencegate::v1::LockService::WithRawMethod_Describe<
                fencegate::v1::LockService::WithRawMethod_WatchFences<
                    fencegate::v1::LockService::WithRawMethod_Session<
                        fencegate::v1::LockService::WithRawMethod_Campaign<
                            fencegate::v1::LockService::WithRawMethod_Proclaim<
                                fencegate::v1::LockService::WithRawMethod_Leader<
                                    fencegate::v1::LockService::WithRawMethod_Resign<
                                        fencegate::v1::LockService::WithRawMethod_Observe<
                                            fencegate::v1::LockService::
                                                Service>>>>>>>>>>>;

class LoopLockService {
 public:
  // The arguments of LockServiceCalls'.
  template <typename... Args>
  explicit LoopLockService(Args&&... args) : calls_(std::forward<Args>(args)...) {}

  // For the server's builder.
  grpc::Service* service() { return &service_; }
  // Accepts every method's calls on `cq`, whose loop runs them. Once, after
  // the server started and before the loop runs.
  void Serve(grpc::ServerCompletionQueue* cq);

 private:
  LockServiceCalls calls_;
  LockAsyncService service_;
  std::vector<std::unique_ptr<CqAcceptor>> methods_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOOP_LOCK_SERVICE_H_
