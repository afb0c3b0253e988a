// CqStreams: a server's session streams (stream_session.h) on gRPC's
// asynchronous API, raw bytes in and out, every event on one completion
// queue run by RunCompletionQueueLoop (completion_queue_loop.h). The same
// contract as StreamReactor (stream_reactor.h), which does this on the
// callback API: a message that does not parse is the session's to answer,
// answers go out as the bytes the session encoded, and the registry
// (stream_registry.h) bounds and ends the streams.
//
// Ownership: each accepted stream owns itself and deletes itself once its
// last operation is back and its session finished it; the session outlives
// it while calls or leases still hold it. `acceptor` state (the request
// and start functions, the registry) must outlive the queue's loop.
// Thread safety: events on the loop's thread; a session may start writes
// and the finish from any thread (under its own lock, as it does).
#ifndef FENCEGATE_COMMON_SERVER_CQ_STREAM_H_
#define FENCEGATE_COMMON_SERVER_CQ_STREAM_H_

#include <functional>

#include "common/core/stream_session.h"
#include "common/core/stream_transport.h"
#include "common/server/cq_unary.h"
#include "common/server/stream_registry.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_stream.h"
#include "grpcpp/support/byte_buffer.h"

namespace fencegate {

using RawServerStream = grpc::ServerAsyncReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;

// Accepts the streams of one raw bidirectional method on `cq`, for ever:
// each accepted stream posts the next accept.
class CqStreamAcceptor final : public CqAcceptor {
 public:
  // Asks gRPC for the method's next stream (the generated
  // Request<Method>(context, stream, cq, cq, tag)).
  using RequestFn = std::function<void(grpc::ServerContext*, RawServerStream*,
                                       grpc::ServerCompletionQueue*, void* tag)>;
  // Starts a stream's session on `transport`, as a derived class's Start().
  using StartFn = std::function<StreamSession*(grpc::ServerContext&, StreamTransport*)>;

  // `registry` may be null (not bounded, not ended by a shutdown).
  CqStreamAcceptor(grpc::ServerCompletionQueue* cq, RequestFn request, StartFn start,
                   StreamRegistry* registry)
      : cq_(cq),
        request_(std::move(request)),
        start_(std::move(start)),
        registry_(registry) {}

  void Accept() override;

 private:
  friend class CqStream;
  grpc::ServerCompletionQueue* const cq_;
  const RequestFn request_;
  const StartFn start_;
  StreamRegistry* const registry_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CQ_STREAM_H_
