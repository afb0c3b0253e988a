// The FencedStore's requests and replies: plain structs, no gRPC types. The
// gRPC layer (gateway_service.h) fills them from protos and back.
//
// Ownership: the string_views in the *Args point into the caller's bytes
// (for the gRPC layer: the request message), which must stay valid until
// the call's callback has run.
#ifndef FENCEGATE_GATEWAY_REQUESTS_H_
#define FENCEGATE_GATEWAY_REQUESTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "gateway/storage_backend.h"

namespace fencegate::gateway {

// The signature that came with a token (common/core/token_signer.h); both
// empty when the request carried none.
//
// `mode` on every request that carries a token: the wire's LeaseMode value
// as it came (an open enum: any int), the mode of the lease the token
// belongs to. request_validation.h refuses the values a call may not use:
// Write and Fence take EXCLUSIVE (0) only; a fenced Read EXCLUSIVE or
// SHARED (1); PERMIT (2) and unknown values nowhere.
struct SignatureView {
  absl::string_view key_id;
  absl::string_view mac;
};

// Write (one mutation) or MultiWrite (several, all or nothing).
struct WriteArgs {
  absl::string_view resource;
  uint64_t token = 0;
  SignatureView signature;
  int mode = 0;
  absl::InlinedVector<Mutation, 1> mutations;
  // MultiWrite: error messages name "mutations[i]"; Write: "mutation".
  bool multi = false;
};

struct WriteResult {
  // The resource's new revision: the version of every key written (for a
  // delete, the revision at which it was deleted).
  uint64_t version = 0;
  uint64_t max_token = 0;  // = the request's token
};

struct ReadArgs {
  absl::string_view resource;
  absl::string_view key;
  uint64_t token = 0;  // 0: plain read; > 0: fenced read
  SignatureView signature;
  // Fenced reads: 0 (EXCLUSIVE) raises the fence to `token`; 1 (SHARED)
  // is checked against the fence the same way but leaves it as it is.
  int mode = 0;
};

// ReadResult comes from storage_backend.h.

struct FenceArgs {
  absl::string_view resource;
  uint64_t token = 0;
  SignatureView signature;
  int mode = 0;
};

struct FenceResult {
  uint64_t max_token = 0;
};

struct ListArgs {
  absl::string_view resource;
  uint32_t page_size = 0;        // 0: the default page size
  absl::string_view page_token;  // from the previous page; empty for the first
};

struct ListResult {
  std::vector<KeyInfo> keys;
  std::string next_page_token;  // empty after the last page
};

// Describe answers with ResourceStats (storage_backend.h).

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_REQUESTS_H_
