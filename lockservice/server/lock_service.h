// LockServiceImpl: fencegate.v1.LockService on gRPC's callback API, every
// call handed to LockServiceCalls (lock_service_calls.h), which does the
// work. The service an etcd deployment's leader serves through
// (routing_lock_service.h), and a standby's shadow; a single instance on
// SQLite serves on its completion-queue loop instead (loop_lock_service.h).
//
// Thread safety: gRPC calls it from many threads (LockServiceCalls').
// Ownership: as LockServiceCalls'; the service must outlive its calls.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_

#include <memory>
#include <utility>

#include "lockservice/server/lock_service_base.h"
#include "lockservice/server/lock_service_calls.h"

namespace fencegate::lockservice {

class LockServiceImpl final : public LockServiceBase {
 public:
  // The arguments of LockServiceCalls'.
  LockServiceImpl(std::shared_ptr<LockManager> manager, LockStore* store, FenceFeed* feed,
                  const TokenSigner* signer, CallerIdentity identity,
                  const StreamLimits& session_limits = StreamLimits(),
                  StreamRegistry* sessions = nullptr,
                  StreamQuota* fence_watchers = nullptr, StreamQuota* observers = nullptr)
      : calls_(std::move(manager), store, feed, signer, std::move(identity),
               session_limits, sessions, fence_watchers, observers) {}

  // Every method of the service (lock_service_base.h).
  FENCEGATE_LOCK_SERVICE_OVERRIDES

 private:
  LockServiceCalls calls_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_H_
