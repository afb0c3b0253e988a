// Fencing: what a fenced call carries to the storage that checks it: the
// resource, the lease's token and its signature. The gateway's calls
// (gateway_client.h) and the SQL fencing API (postgres_fence.h) take one.
//
// Thread safety: a plain value.
#ifndef FENCEGATE_CLIENT_FENCING_H_
#define FENCEGATE_CLIENT_FENCING_H_

#include <cstdint>
#include <string>

#include "fencegate/client/lease.h"
#include "fencegate/token_signature.h"

namespace fencegate::client {

// The resource, token and signature a fenced call carries (a Lease, or
// values from elsewhere, e.g. the CLI: fencing_token.h parses them).
struct Fencing {
  std::string resource;
  uint64_t token = 0;
  TokenSignature signature;  // empty: unsigned
};
Fencing FencingOf(const Lease& lease);

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_FENCING_H_
