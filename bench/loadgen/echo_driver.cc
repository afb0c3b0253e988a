#include "bench/loadgen/echo_driver.h"

#include "bench/loadgen/grpc_util.h"

namespace fencegate::bench {
namespace {

absl::Status NoLocks() {
  return absl::UnimplementedError("grpc-empty has no locks; use --workload=rpc");
}

}  // namespace

absl::Status EchoDriver::Open(absl::Duration /*session_ttl*/) {
  auto channel = ConnectOwnChannel(target_, kCallTimeout);
  if (!channel.ok()) return channel.status();
  stub_ = Echo::NewStub(*channel);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<HeldLock>> EchoDriver::Acquire(
    const std::string&, const AcquireOptions&) {
  return NoLocks();
}
absl::Status EchoDriver::Release(const HeldLock&) { return NoLocks(); }
absl::Status EchoDriver::FencedWrite(const HeldLock&, absl::string_view,
                                     absl::string_view) {
  return NoLocks();
}

absl::Status EchoDriver::EmptyCall() {
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  return FromGrpc("Echo.Call", stub_->Call(&context, request_, &response_));
}

}  // namespace fencegate::bench
