#include "common/grpc/byte_buffers.h"

#include <utility>

#include "grpcpp/support/slice.h"

namespace fencegate {
namespace {

void DeleteString(void* bytes) { delete static_cast<std::string*>(bytes); }

}  // namespace

grpc::ByteBuffer ByteBufferOf(std::string bytes) {
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(owned->data(), owned->size(), &DeleteString, owned);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace fencegate
