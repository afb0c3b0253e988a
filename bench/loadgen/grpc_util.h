// Small gRPC helpers shared by the gRPC drivers (fencegate, etcd, echo).
//
// Thread safety: free functions, no shared state.
#ifndef FENCEGATE_BENCH_LOADGEN_GRPC_UTIL_H_
#define FENCEGATE_BENCH_LOADGEN_GRPC_UTIL_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace fencegate::bench {

// How long a gRPC driver waits to connect, and for any one call beyond what
// the call itself may wait (a lock's wait).
inline constexpr absl::Duration kCallTimeout = absl::Seconds(10);

// A channel with its own TCP connection (not shared with any other channel
// of the process, which gRPC does by default for equal targets), connected
// before it returns or an error after `timeout`.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectOwnChannel(
    const std::string& target, absl::Duration timeout);

// "<what>: <CODE>: <message>" as an absl::Status with the same code.
absl::Status FromGrpc(absl::string_view what, const grpc::Status& status);

// Sets the context's deadline to `deadline` (an absl::Now() time).
void SetDeadline(grpc::ClientContext& context, absl::Time deadline);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_GRPC_UTIL_H_
