// What the client library's calls share on the wire (private to client/):
// a call's deadline, which gRPC takes on the wall clock while the library
// measures on its monotonic one, a token's signature in a request, and a
// call's response out of a Session stream's result.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_CLIENT_WIRE_H_
#define FENCEGATE_CLIENT_WIRE_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fencegate/token_signature.h"
#include "fencegate/v1/token.pb.h"
#include "grpcpp/client_context.h"

namespace fencegate::client {

// The call ends `timeout` from now.
inline void SetTimeout(grpc::ClientContext& ctx, absl::Duration timeout) {
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

// Sets `proto` from `signature`; leaves it unset when there is none.
inline void SetSignature(const TokenSignature& signature, v1::TokenSignature* proto) {
  if (signature.empty()) return;
  proto->set_key_id(signature.key_id);
  proto->set_mac(signature.mac);
}

// Moves the response out of a Session stream's `result` (a LockResult or
// a GatewayResult) into *out if it is of the kind `kind`, whose message
// `mutable_response` gives; false if the result is of another kind.
template <typename Result, typename Response>
bool TakeResponse(Result& result, typename Result::ResultCase kind,
                  Response* (Result::*mutable_response)(), Response* out) {
  if (result.result_case() != kind) return false;
  out->Swap((result.*mutable_response)());
  return true;
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_WIRE_H_
