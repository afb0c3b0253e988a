// DeliverRead: what both Session transports (stream_reactor.h on gRPC's
// callback API, cq_stream.h on its completion queue) do with a finished
// read of a raw-bytes stream: hand the message's bytes to the session
// (StreamSession::OnMessage), or, when the read failed (the client's
// messages ended) or gRPC could not hand the bytes over in one piece, tell
// it no message will come (OnReadsDone). Empties `in` for the next read.
// Thread safety: on the thread that received the read's completion.
#ifndef FENCEGATE_COMMON_SERVER_RAW_STREAM_READS_H_
#define FENCEGATE_COMMON_SERVER_RAW_STREAM_READS_H_

#include "absl/strings/string_view.h"
#include "common/core/stream_session.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"

namespace fencegate {

inline void DeliverRead(bool ok, grpc::ByteBuffer& in, StreamSession& session) {
  grpc::Slice slice;
  if (!ok || (!in.TrySingleSlice(&slice).ok() && !in.DumpToSingleSlice(&slice).ok())) {
    in.Clear();
    session.OnReadsDone();
    return;
  }
  in.Clear();  // the slice keeps the bytes
  session.OnMessage(
      absl::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size()));
}

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_RAW_STREAM_READS_H_
