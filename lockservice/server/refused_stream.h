// RefusedStream: a server stream's reactor (grpc::ServerWriteReactor<R>, or
// a bidi reactor such as RawStreamReactor) that ends the stream at once
// with a status: how a stream that is not served (no quota, not allowed,
// no leader) is answered.
//
// Thread safety: gRPC drives it. Ownership: it deletes itself in OnDone();
// create it with new and hand it to gRPC.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_REFUSED_STREAM_H_
#define FENCEGATE_LOCKSERVICE_SERVER_REFUSED_STREAM_H_

#include "absl/status/status.h"
#include "common/grpc/grpc_status.h"

namespace fencegate::lockservice {

template <typename Reactor>
class RefusedStream final : public Reactor {
 public:
  // REQUIRES: !status.ok().
  explicit RefusedStream(const absl::Status& status) {
    this->Finish(ToGrpcStatus(status));
  }
  void OnDone() override { delete this; }
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_REFUSED_STREAM_H_
