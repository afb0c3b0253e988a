// LockServiceBase: the gRPC service type that every implementation of
// fencegate.v1.LockService here derives from (LockServiceImpl, which
// serves; ForwardingLockService, which forwards to the leader;
// RoutingLockService, which picks one): every method on the callback API,
// and Session on raw bytes (grpc::ByteBuffer), so the session parses its
// messages itself (common/server/stream_reactor.h) and a standby relays them
// unparsed.
//
// Thread safety: types and macros only.
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

// The service's methods, as X-lists: X(Method, Request, Response), with the
// message types' names in fencegate::v1. Each implementation declares its
// overrides with FENCEGATE_LOCK_SERVICE_OVERRIDES, and may define the
// methods it treats alike (forwarding, routing) from these lists, so a
// method added to the service is added in one place.
//
// The unary methods.
#define FENCEGATE_LOCK_SERVICE_UNARY_METHODS(X)  \
  X(Acquire, AcquireRequest, AcquireResponse)    \
  X(Renew, RenewRequest, RenewResponse)          \
  X(Release, ReleaseRequest, ReleaseResponse)    \
  X(Describe, DescribeRequest, DescribeResponse) \
  X(Campaign, CampaignRequest, AcquireResponse)  \
  X(Proclaim, ProclaimRequest, ProclaimResponse) \
  X(Leader, LeaderRequest, LeaderResponse)       \
  X(Resign, ResignRequest, ResignResponse)
// The server-streaming methods (one request, a stream of responses).
#define FENCEGATE_LOCK_SERVICE_WRITE_METHODS(X)           \
  X(WatchFences, WatchFencesRequest, WatchFencesResponse) \
  X(Observe, ObserveRequest, ObserveResponse)
// Session, the one bidirectional stream, on raw bytes, is not in a list.

#define FENCEGATE_LOCK_SERVICE_DECLARE_UNARY_(Method, Request, Response)    \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* context,    \
                                   const ::fencegate::v1::Request* request, \
                                   ::fencegate::v1::Response* response) override;
#define FENCEGATE_LOCK_SERVICE_DECLARE_WRITE_(Method, Request, Response)             \
  grpc::ServerWriteReactor<::fencegate::v1::Response>* Method(                       \
      grpc::CallbackServerContext* context, const ::fencegate::v1::Request* request) \
      override;

// Declares every method of the service as an override, in the body of a
// class derived from LockServiceBase.
#define FENCEGATE_LOCK_SERVICE_OVERRIDES                                      \
  FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_LOCK_SERVICE_DECLARE_UNARY_) \
  FENCEGATE_LOCK_SERVICE_WRITE_METHODS(FENCEGATE_LOCK_SERVICE_DECLARE_WRITE_) \
  ::fencegate::lockservice::RawStreamReactor* Session(                        \
      grpc::CallbackServerContext* context) override;

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVICE_BASE_H_
