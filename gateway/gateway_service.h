// GatewayServiceImpl: fencegate.v1.Gateway over gRPC's callback API. It only
// translates: proto in, FencedStore call, proto out, and refuses requests
// with fields it does not know. A fenced call holds no thread while it waits
// for its group commit: its reactor is finished from the store's callback.
//
// Ownership: `store` must outlive the service. The FencedStore args point
// into the request message, which gRPC keeps alive until Finish().
// Thread safety: gRPC calls it from many threads; all state is in the store.
#ifndef FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
#define FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_

#include "fencegate/v1/gateway.grpc.pb.h"
#include "gateway/fenced_store.h"

namespace fencegate::gateway {

class GatewayServiceImpl final : public fencegate::v1::Gateway::CallbackService {
 public:
  explicit GatewayServiceImpl(FencedStore* store) : store_(store) {}

  grpc::ServerUnaryReactor* Write(grpc::CallbackServerContext* context,
                                  const fencegate::v1::WriteRequest* request,
                                  fencegate::v1::WriteResponse* response) override;
  grpc::ServerUnaryReactor* MultiWrite(
      grpc::CallbackServerContext* context,
      const fencegate::v1::MultiWriteRequest* request,
      fencegate::v1::MultiWriteResponse* response) override;
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const fencegate::v1::ReadRequest* request,
                                 fencegate::v1::ReadResponse* response) override;
  grpc::ServerUnaryReactor* Fence(grpc::CallbackServerContext* context,
                                  const fencegate::v1::FenceRequest* request,
                                  fencegate::v1::FenceResponse* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* context,
                                 const fencegate::v1::ListRequest* request,
                                 fencegate::v1::ListResponse* response) override;
  grpc::ServerUnaryReactor* Describe(
      grpc::CallbackServerContext* context,
      const fencegate::v1::DescribeResourceRequest* request,
      fencegate::v1::DescribeResourceResponse* response) override;

 private:
  FencedStore* const store_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
