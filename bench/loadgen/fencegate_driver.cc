#include "bench/loadgen/fencegate_driver.h"

#include <algorithm>
#include <utility>

#include "bench/loadgen/grpc_util.h"

namespace fencegate::bench {
namespace {

// Every non-waiting call finishes well within this, even on a busy machine.
constexpr absl::Duration kCallTimeout = absl::Seconds(10);

}  // namespace

FencegateDriver::FencegateDriver(std::string lock_target,
                                 std::string gateway_target, std::string holder)
    : lock_target_(std::move(lock_target)),
      gateway_target_(std::move(gateway_target)),
      holder_(std::move(holder)) {}

absl::Status FencegateDriver::Open(absl::Duration /*session_ttl*/) {
  auto lock_channel = ConnectOwnChannel(lock_target_, kCallTimeout);
  if (!lock_channel.ok()) return lock_channel.status();
  locks_ = v1::LockService::NewStub(*lock_channel);
  if (!gateway_target_.empty()) {
    auto gateway_channel = ConnectOwnChannel(gateway_target_, kCallTimeout);
    if (!gateway_channel.ok()) return gateway_channel.status();
    gateway_ = v1::Gateway::NewStub(*gateway_channel);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<HeldLock>> FencegateDriver::Acquire(
    const std::string& resource, const AcquireOptions& options) {
  const absl::Time now = absl::Now();
  int64_t wait_ms = 0;
  if (options.wait) {
    if (now >= options.give_up) return std::nullopt;
    wait_ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(options.give_up - now));
  }
  acquire_.set_resource(resource);
  acquire_.set_holder(holder_);
  acquire_.set_ttl_ms(absl::ToInt64Milliseconds(options.ttl));
  acquire_.set_wait_ms(wait_ms);
  grpc::ClientContext context;
  SetDeadline(context, now + absl::Milliseconds(wait_ms) + kCallTimeout);
  absl::Status status =
      FromGrpc("Acquire", locks_->Acquire(&context, acquire_, &acquired_));
  if (!status.ok()) return status;
  if (!acquired_.acquired()) return std::nullopt;
  return HeldLock{resource, acquired_.token(), holder_};
}

absl::Status FencegateDriver::Release(const HeldLock& lock) {
  release_.set_resource(lock.resource);
  release_.set_token(lock.token);
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  return FromGrpc("Release", locks_->Release(&context, release_, &released_));
}

absl::Status FencegateDriver::FencedWrite(const HeldLock& lock,
                                          absl::string_view key,
                                          absl::string_view value) {
  if (gateway_ == nullptr) {
    return absl::FailedPreconditionError("FencedWrite: no --gateway_target given");
  }
  write_.set_resource(lock.resource);
  write_.set_token(lock.token);
  v1::Mutation* mutation = write_.mutable_mutation();
  mutation->set_key(key.data(), key.size());
  mutation->set_value(value.data(), value.size());
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  return FromGrpc("Write", gateway_->Write(&context, write_, &written_));
}

}  // namespace fencegate::bench
