// StreamReactor: a server's session stream (stream_session.h) over gRPC's
// callback API. A ServerBidiReactor on raw bytes (grpc::ByteBuffer): the
// session parses the messages itself, so a message that does not parse is
// answered (INVALID_ARGUMENT for the requests in it) instead of looking like
// the client's end of stream, which is all gRPC's typed reactor would
// report; and answers go out as the bytes the session encoded, without
// another copy.
//
// The registry (stream_registry.h) bounds and ends the streams.
//
// Ownership: gRPC drives the reactor; it deletes itself in OnDone(). The
// session outlives it while calls or leases still hold it.
// Thread safety: gRPC's rules for reactors.
#ifndef FENCEGATE_COMMON_SERVER_STREAM_REACTOR_H_
#define FENCEGATE_COMMON_SERVER_STREAM_REACTOR_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "common/core/stream_session.h"
#include "common/core/stream_transport.h"
#include "common/server/stream_registry.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"

namespace fencegate {

class StreamReactor;

class StreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `start` starts the session on the transport it is given (a derived
  // class's Start()). `registry` may be null.
  StreamReactor(absl::FunctionRef<StreamSession*(StreamTransport*)> start,
                StreamRegistry* registry);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // The session's view of this stream.
  class Transport final : public StreamTransport {
   public:
    explicit Transport(StreamReactor* reactor) : reactor_(reactor) {}
    void StartRead() override;
    void StartWrite(std::string bytes) override;
    void Finish(const absl::Status& status) override;

   private:
    StreamReactor* const reactor_;
  };

  StreamRegistry* const registry_;  // may be null
  Transport transport_{this};
  grpc::ByteBuffer in_;   // the message being read
  grpc::ByteBuffer out_;  // the message being written
  StreamSession* session_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_STREAM_REACTOR_H_
