// Fencing: what a fenced call carries to the storage that checks it: the
// resource, the lease's token, its signature and the lease's mode. The gateway's calls
// (gateway_client.h) and the SQL fencing API (postgres_fence.h) take one.
//
// Thread safety: a plain value.
#ifndef FENCEGATE_CLIENT_FENCING_H_
#define FENCEGATE_CLIENT_FENCING_H_

#include <cstdint>
#include <string>

#include "fencegate/client/lease.h"
#include "fencegate/client/lease_mode.h"
#include "fencegate/token_signature.h"

namespace fencegate::client {

// The resource, token, signature and mode a fenced call carries (a Lease,
// or values from elsewhere, e.g. the CLI: fencing_token.h parses them).
// The mode is the lease's: an exclusive lease's token writes, fences and
// reads at the gateway; a shared lease's token only reads (a fenced read
// that leaves the fence as it is), and the gateway refuses its writes and a
// permit's token with INVALID_ARGUMENT. A signature is valid for its mode
// only. The SQL fencing API (postgres_fence.h) takes exclusive tokens only.
struct Fencing {
  std::string resource;
  uint64_t token = 0;
  TokenSignature signature;  // empty: unsigned
  LeaseMode mode = LeaseMode::kExclusive;
};
Fencing FencingOf(const Lease& lease);

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_FENCING_H_
