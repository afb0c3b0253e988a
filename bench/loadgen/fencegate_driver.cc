#include "bench/loadgen/fencegate_driver.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "bench/loadgen/grpc_util.h"

namespace fencegate::bench {
namespace {

// Every non-waiting call finishes well within this, even on a busy machine.
// A driver's Session stream outlives any run (40 s at most) and its setup.
constexpr absl::Duration kSessionLifetime = absl::Minutes(10);

// A GatewayResult's outcome: OK for a write's response, else its status.
absl::Status OutcomeOf(const v1::GatewayResult& result) {
  if (result.result_case() == v1::GatewayResult::kWrite) return absl::OkStatus();
  if (result.result_case() != v1::GatewayResult::kError) {
    return absl::InternalError("Session: a write was answered with another response");
  }
  return absl::Status(static_cast<absl::StatusCode>(result.error().code()),
                      absl::StrCat("Session write: ", result.error().message()));
}

// The wait to ask for: 0 for a try-lock, nullopt when the wait has run out.
std::optional<int64_t> WaitMs(absl::Time now, const AcquireOptions& options) {
  if (!options.wait) return 0;
  if (now >= options.give_up) return std::nullopt;
  return std::max<int64_t>(1, absl::ToInt64Milliseconds(options.give_up - now));
}

// Opens a Session stream (`what`: "Session" or "lock Session", for errors)
// on `stub` for the driver's life: its context, then the stream.
template <typename Stub, typename Stream>
absl::Status OpenSession(Stub& stub, const char* what,
                         std::unique_ptr<grpc::ClientContext>& context,
                         std::unique_ptr<Stream>& stream) {
  context = std::make_unique<grpc::ClientContext>();
  SetDeadline(*context, absl::Now() + kSessionLifetime);
  stream = stub.Session(context.get());
  if (stream == nullptr) return absl::UnavailableError(absl::StrCat(what, ": no stream"));
  return absl::OkStatus();
}

// Half-closes an open Session stream, reads what is left into `in`, and
// drops it and its context.
template <typename Stream, typename Response>
void CloseSession(std::unique_ptr<grpc::ClientContext>& context,
                  std::unique_ptr<Stream>& stream, Response& in) {
  if (stream == nullptr) return;
  stream->WritesDone();
  while (stream->Read(&in)) {
  }
  stream->Finish().IgnoreError();
  stream.reset();
  context.reset();
}

// A Session stream's end while answers were due, as an error.
template <typename Stream>
absl::Status SessionEndedEarly(const char* what, std::unique_ptr<Stream>& stream) {
  absl::Status status = FromGrpc(what, stream->Finish());
  stream.reset();
  if (status.ok()) {
    return absl::UnavailableError(absl::StrCat(what, ": the stream ended early"));
  }
  return status;
}

}  // namespace

FencegateDriver::FencegateDriver(std::string lock_target, std::string gateway_target,
                                 std::string holder, Transport transport)
    : lock_target_(std::move(lock_target)),
      gateway_target_(std::move(gateway_target)),
      holder_(std::move(holder)),
      transport_(transport) {}

FencegateDriver::~FencegateDriver() { Close(); }

absl::Status FencegateDriver::Open(absl::Duration /*session_ttl*/) {
  if (lock_target_.empty()) return OpenGateway();
  auto lock_channel = ConnectOwnChannel(lock_target_, kCallTimeout);
  if (!lock_channel.ok()) return lock_channel.status();
  locks_ = v1::LockService::NewStub(*lock_channel);
  if (transport_ == Transport::kStream) {
    absl::Status opened =
        OpenSession(*locks_, "lock Session", lock_session_context_, lock_session_);
    if (!opened.ok()) return opened;
  }
  return OpenGateway();
}

absl::Status FencegateDriver::OpenGateway() {
  if (gateway_target_.empty()) return absl::OkStatus();
  auto gateway_channel = ConnectOwnChannel(gateway_target_, kCallTimeout);
  if (!gateway_channel.ok()) return gateway_channel.status();
  gateway_ = v1::Gateway::NewStub(*gateway_channel);
  if (transport_ == Transport::kStream) {
    return OpenSession(*gateway_, "Session", session_context_, session_);
  }
  return absl::OkStatus();
}

void FencegateDriver::Close() {
  CloseSession(lock_session_context_, lock_session_, lock_in_);
  CloseSession(session_context_, session_, in_);
}

void FencegateDriver::SetWrite(v1::GatewayCall& call, uint64_t id, const HeldLock& lock,
                               absl::string_view key, absl::string_view value) {
  call.set_request_id(id);
  v1::WriteRequest* write = call.mutable_write();
  write->set_resource(lock.resource);
  write->set_token(lock.token);
  v1::Mutation* mutation = write->mutable_mutation();
  mutation->set_key(key.data(), key.size());
  mutation->set_value(value.data(), value.size());
}

absl::Status FencegateDriver::SessionEnded() {
  return SessionEndedEarly("Session", session_);
}

absl::Status FencegateDriver::LockSessionEnded() {
  return SessionEndedEarly("lock Session", lock_session_);
}

absl::StatusOr<const v1::LockResult*> FencegateDriver::LockStreamCall() {
  if (lock_session_ == nullptr) {
    return absl::UnavailableError("lock Session: the stream has ended");
  }
  const uint64_t id = lock_out_.calls(0).request_id();
  if (!lock_session_->Write(lock_out_)) return LockSessionEnded();
  for (;;) {
    if (!lock_session_->Read(&lock_in_)) return LockSessionEnded();
    if (lock_in_.results_size() == 0) continue;  // pushes only: a lease ended
    const v1::LockResult& result = lock_in_.results(0);
    if (lock_in_.results_size() != 1 || result.request_id() != id) {
      return absl::InternalError("lock Session: the answer is not the call's");
    }
    if (result.result_case() == v1::LockResult::kError) {
      return absl::Status(static_cast<absl::StatusCode>(result.error().code()),
                          absl::StrCat("lock Session: ", result.error().message()));
    }
    return &result;
  }
}

v1::AcquireRequest& FencegateDriver::NextAcquire(const AcquireOptions& options,
                                                 int64_t wait_ms) {
  v1::AcquireRequest* acquire = &acquire_;
  if (transport_ == Transport::kStream) {
    if (lock_out_.calls_size() == 0) lock_out_.add_calls();
    v1::LockCall& call = *lock_out_.mutable_calls(0);
    call.set_request_id(next_id_++);
    acquire = call.mutable_acquire();
  }
  acquire->Clear();
  acquire->set_holder(holder_);
  acquire->set_ttl_ms(absl::ToInt64Milliseconds(options.ttl));
  acquire->set_wait_ms(wait_ms);
  acquire->set_request_id(options.request_id);
  acquire->set_mode(options.mode == LockMode::kShared ? v1::LEASE_MODE_SHARED
                                                      : v1::LEASE_MODE_EXCLUSIVE);
  return *acquire;
}

absl::StatusOr<const v1::AcquireResponse*> FencegateDriver::SendAcquire(absl::Time now,
                                                                        int64_t wait_ms) {
  if (transport_ == Transport::kStream) {
    absl::StatusOr<const v1::LockResult*> result = LockStreamCall();
    if (!result.ok()) return result.status();
    return &(*result)->acquire();
  }
  grpc::ClientContext context;
  SetDeadline(context, now + absl::Milliseconds(wait_ms) + kCallTimeout);
  absl::Status status =
      FromGrpc("Acquire", locks_->Acquire(&context, acquire_, &acquired_));
  if (!status.ok()) return status;
  return &acquired_;
}

absl::StatusOr<std::optional<HeldLock>> FencegateDriver::Acquire(
    const std::string& resource, const AcquireOptions& options) {
  const absl::Time now = absl::Now();
  const std::optional<int64_t> wait_ms = WaitMs(now, options);
  if (!wait_ms) return std::nullopt;
  NextAcquire(options, *wait_ms).set_resource(resource);
  absl::StatusOr<const v1::AcquireResponse*> acquired = SendAcquire(now, *wait_ms);
  if (!acquired.ok()) return acquired.status();
  if (!(*acquired)->acquired()) return std::nullopt;
  return HeldLock{resource, (*acquired)->token(), holder_, options.mode};
}

absl::StatusOr<std::optional<std::vector<HeldLock>>> FencegateDriver::AcquireMany(
    const std::vector<std::string>& resources, const AcquireOptions& options) {
  if (options.mode == LockMode::kWrite) {
    return absl::InvalidArgumentError("AcquireMany: kExclusive or kShared");
  }
  const absl::Time now = absl::Now();
  const std::optional<int64_t> wait_ms = WaitMs(now, options);
  if (!wait_ms) return std::nullopt;
  v1::AcquireRequest& request = NextAcquire(options, *wait_ms);
  for (const std::string& resource : resources) request.add_resources(resource);
  absl::StatusOr<const v1::AcquireResponse*> acquired = SendAcquire(now, *wait_ms);
  if (!acquired.ok()) return acquired.status();
  if (!(*acquired)->acquired()) return std::nullopt;
  const auto& leases = (*acquired)->leases();
  if (leases.size() != static_cast<int>(resources.size())) {
    return absl::InternalError(absl::StrCat("Acquire(resources): ", leases.size(),
                                            " leases for ", resources.size(),
                                            " resources (does the server know "
                                            "AcquireRequest.resources?)"));
  }
  std::vector<HeldLock> held;
  held.reserve(leases.size());
  for (int i = 0; i < leases.size(); ++i) {
    if (leases[i].resource() != resources[i]) {
      return absl::InternalError(
          "Acquire(resources): the leases are not in the order asked");
    }
    held.push_back(HeldLock{resources[i], leases[i].token(), holder_, options.mode});
  }
  return held;
}

absl::Status FencegateDriver::Release(const HeldLock& lock) {
  if (transport_ == Transport::kStream) {
    if (lock_out_.calls_size() == 0) lock_out_.add_calls();
    v1::LockCall& call = *lock_out_.mutable_calls(0);
    call.set_request_id(next_id_++);
    v1::ReleaseRequest* release = call.mutable_release();
    release->set_resource(lock.resource);
    release->set_token(lock.token);
    return LockStreamCall().status();
  }
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
  if (transport_ == Transport::kStream) {
    if (session_ == nullptr) return absl::UnavailableError("Session: the stream has ended");
    const uint64_t id = next_id_++;
    if (out_.calls_size() == 0) out_.add_calls();
    SetWrite(*out_.mutable_calls(0), id, lock, key, value);
    if (!session_->Write(out_) || !session_->Read(&in_)) return SessionEnded();
    if (in_.results_size() != 1 || in_.results(0).request_id() != id) {
      return absl::InternalError("Session: the answer is not the write's");
    }
    return OutcomeOf(in_.results(0));
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

namespace fencegate::bench {

absl::Status FencegateDriver::PipelinedWrites(LockOf lock_of, absl::string_view key,
                                              absl::string_view value, int depth,
                                              absl::Time end, uint64_t count,
                                              PipelineDone done) {
  if (transport_ != Transport::kStream || session_ == nullptr) {
    return absl::UnimplementedError("pipelined writes need the gateway's Session stream");
  }
  // The k of each call in flight, and when it was sent, by request id.
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, absl::Time>> in_flight;
  uint64_t k = 0;
  int to_send = depth;
  v1::GatewaySessionRequest message;
  for (;;) {
    message.clear_calls();
    const absl::Time now = absl::Now();
    for (; to_send > 0 && now < end && k < count; --to_send, ++k) {
      const uint64_t id = next_id_++;
      SetWrite(*message.add_calls(), id, lock_of(k), key, value);
      in_flight.emplace(id, std::make_pair(k, now));
    }
    to_send = 0;
    if (message.calls_size() > 0 && !session_->Write(message)) return SessionEnded();
    if (in_flight.empty()) return absl::OkStatus();
    if (!session_->Read(&in_)) return SessionEnded();
    for (const v1::GatewayResult& result : in_.results()) {
      auto it = in_flight.find(result.request_id());
      if (it == in_flight.end()) {
        return absl::InternalError("Session: an answer to no write in flight");
      }
      done(it->second.first, it->second.second, OutcomeOf(result));
      in_flight.erase(it);
      ++to_send;
    }
  }
}

}  // namespace fencegate::bench
