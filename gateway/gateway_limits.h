// GatewayLimits: the gateway's bounds, each settable by a flag of
// fencegate-gateway with the same name. The defaults here are the only place
// they are written down in code; docs/gateway.md lists them for users.
// Anything outside a bound is refused with INVALID_ARGUMENT naming the field
// and the limit (RESOURCE_EXHAUSTED for max_pending).
#ifndef FENCEGATE_GATEWAY_GATEWAY_LIMITS_H_
#define FENCEGATE_GATEWAY_GATEWAY_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace fencegate::gateway {

struct GatewayLimits {
  // Resource names are the lock service's resource names: same default.
  size_t max_resource_bytes = 256;
  size_t max_key_bytes = 1024;
  size_t max_value_bytes = 1 << 20;  // 1 MiB
  // Mutations in one MultiWrite.
  size_t max_mutations = 128;
  // Keys plus values of one MultiWrite, in bytes. Must be >= max_value_bytes.
  size_t max_request_bytes = 8 << 20;  // 8 MiB
  // List: page_size 0 means default_page_size; above max_page_size refused.
  uint32_t default_page_size = 100;
  uint32_t max_page_size = 1000;
  // Most requests one group-commit transaction takes.
  size_t max_batch = 1024;
  // Requests waiting for a commit; past it new ones get RESOURCE_EXHAUSTED.
  size_t max_pending = 10000;
  // Resources whose committed fence the gateway keeps in memory, to refuse
  // stale tokens at once (fence_cache.h; over a sole fence writer only,
  // SQLite); 0 = no cache.
  size_t fence_cache_resources = 65536;
};

// The gRPC max receive message size derived from the limits: room for the
// largest valid request plus one oversized value, so a value that is too
// large still arrives and is refused with our INVALID_ARGUMENT (naming the
// field and limit) instead of gRPC's transport-level RESOURCE_EXHAUSTED.
// Requests larger still are cut off by gRPC.
inline int MaxReceiveMessageBytes(const GatewayLimits& limits) {
  constexpr size_t kEnvelope = 64 << 10;  // names, tokens, framing
  size_t bytes = limits.max_request_bytes + limits.max_value_bytes + kEnvelope;
  constexpr size_t kMaxInt = 0x7fffffff;
  return static_cast<int>(bytes < kMaxInt ? bytes : kMaxInt);
}

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_LIMITS_H_
