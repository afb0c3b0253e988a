// ByteBufferOf: a gRPC message made of bytes a caller encoded, without a
// copy: the message takes the string over. For the raw-bytes streams of
// both servers (common/server/stream_reactor.h, cq_stream.h).
// Thread safety: a function of its argument.
#ifndef FENCEGATE_COMMON_GRPC_BYTE_BUFFERS_H_
#define FENCEGATE_COMMON_GRPC_BYTE_BUFFERS_H_

#include <string>

#include "grpcpp/support/byte_buffer.h"

namespace fencegate {

grpc::ByteBuffer ByteBufferOf(std::string bytes);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_GRPC_BYTE_BUFFERS_H_
