// The gateway Session stream's messages (gateway.proto:
// GatewaySessionRequest in, GatewaySessionResponse out) between bytes and
// what the session (session.h) works with. No gRPC types, so the fuzz
// target parses exactly what the server parses.
//
// Parsing, and appending answers one by one as elements of
// GatewaySessionResponse.results, follow common/core/stream_wire.h.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_GATEWAY_SESSION_WIRE_H_
#define FENCEGATE_GATEWAY_SESSION_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/stream_wire.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/requests.h"

namespace fencegate::gateway {

// A parsed incoming message (common/core/stream_wire.h). The FencedStore args
// made from its calls point into its arena, so it lives until the last of
// its calls is answered.
using IncomingCall = ::fencegate::IncomingCall<fencegate::v1::GatewayCall>;
using IncomingMessage =
    ::fencegate::IncomingMessage<fencegate::v1::GatewaySessionRequest,
                                 fencegate::v1::GatewayCall>;

// How a call's answer is encoded: which response field carries it.
enum class CallKind { kWrite, kMultiWrite, kRead, kFence };

// Appends one answer to `out` (see the header). `multi_count`: for
// kMultiWrite, how many versions the response lists.
void AppendWriteResult(uint64_t request_id, CallKind kind, int multi_count,
                       const absl::StatusOr<WriteResult>& result, std::string* out);
void AppendReadResult(uint64_t request_id, absl::StatusOr<ReadResult> result,
                      std::string* out);
void AppendFenceResult(uint64_t request_id, const absl::StatusOr<FenceResult>& result,
                       std::string* out);
// An answer that is the status alone. REQUIRES: !status.ok().
void AppendError(uint64_t request_id, const absl::Status& status, std::string* out);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SESSION_WIRE_H_
