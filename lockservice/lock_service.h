// LockServiceImpl: fencegate.v1.LockService over gRPC's callback API. It only
// translates: proto in, LockManager call, proto out. A parked Acquire holds
// no thread: its reactor waits for the manager's callback, and a client that
// goes away cancels the wait.
//
// Thread safety: gRPC calls it from many threads; all state is in the
// manager. Ownership: the service and each parked Acquire's reactor share
// the manager, so it lives until the last of them is done (an instance of
// a replicated deployment replaces its manager at each term).
#ifndef FENCEGATE_LOCKSERVICE_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_LOCK_SERVICE_H_

#include <memory>

#include "fencegate/v1/lock.grpc.pb.h"
#include "lockservice/lock_manager.h"

namespace fencegate::lockservice {

class LockServiceImpl final : public fencegate::v1::LockService::CallbackService {
 public:
  explicit LockServiceImpl(std::shared_ptr<LockManager> manager)
      : manager_(std::move(manager)) {}

  grpc::ServerUnaryReactor* Acquire(grpc::CallbackServerContext* context,
                                    const fencegate::v1::AcquireRequest* request,
                                    fencegate::v1::AcquireResponse* response) override;
  grpc::ServerUnaryReactor* Renew(grpc::CallbackServerContext* context,
                                  const fencegate::v1::RenewRequest* request,
                                  fencegate::v1::RenewResponse* response) override;
  grpc::ServerUnaryReactor* Release(grpc::CallbackServerContext* context,
                                    const fencegate::v1::ReleaseRequest* request,
                                    fencegate::v1::ReleaseResponse* response) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* context,
                                     const fencegate::v1::DescribeRequest* request,
                                     fencegate::v1::DescribeResponse* response) override;

 private:
  const std::shared_ptr<LockManager> manager_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LOCK_SERVICE_H_
