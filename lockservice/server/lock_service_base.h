// LockServiceBase: the gRPC service type that every implementation of
// fencegate.v1.LockService here derives from (LockServiceImpl, which
// serves; ForwardingLockService, which forwards to the leader;
// RoutingLockService, which picks one): every method on the callback API,
// and Session on raw bytes (grpc::ByteBuffer), so the session parses its
// messages itself (common/server/stream_reactor.h) and a standby relays them
// unparsed.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_BASE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_BASE_H_

#include "fencegate/v1/lock.grpc.pb.h"

namespace fencegate::lockservice {

using LockServiceBase = fencegate::v1::LockService::WithCallbackMethod_Acquire<
    fencegate::v1::LockService::WithCallbackMethod_Renew<
        fencegate::v1::LockService::WithCallbackMethod_Release<
            fencegate::v1::LockService::WithCallbackMethod_Describe<
                fencegate::v1::LockService::WithCallbackMethod_WatchFences<
                    fencegate::v1::LockService::WithRawCallbackMethod_Session<
                        fencegate::v1::LockService::WithCallbackMethod_Campaign<
                            fencegate::v1::LockService::WithCallbackMethod_Proclaim<
                                fencegate::v1::LockService::WithCallbackMethod_Leader<
                                    fencegate::v1::LockService::WithCallbackMethod_Resign<
                                        fencegate::v1::LockService::
                                            WithCallbackMethod_Observe<
                                                fencegate::v1::LockService::
                                                    Service>>>>>>>>>>>;

// The raw Session reactor's type.
using RawStreamReactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_BASE_H_
