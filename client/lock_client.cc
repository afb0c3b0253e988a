#include "fencegate/client/lock_client.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "client/lease_watches.h"
#include "client/lock_stub.h"
#include "client/retry.h"
#include "client/session_stream.h"
#include "client/wire.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::client {
namespace {

// AcquireLease's and AcquireMultiLease's FAILED_PRECONDITION (IsNotAcquired)
// when `what` was not granted, CurrentToken() = the holder's token.
absl::Status NotAcquiredError(absl::string_view what, bool lock_delay,
                              uint64_t holder_token, absl::Duration retry_after) {
  absl::Status status = absl::FailedPreconditionError(absl::StrCat(
      what, ": ",
      lock_delay ? "held back by a lock-delay after an expiry"
                 : absl::StrCat("held with token ", holder_token),
      "; retry in ", absl::FormatDuration(retry_after), " or acquire with a wait"));
  ErrorInfo info;
  info.current_token = holder_token;
  SetErrorInfo(status, info);
  return status;
}

namespace v1 = ::fencegate::v1;

// LeaseMode goes on the wire as its number (both are never renumbered).
static_assert(static_cast<int>(LeaseMode::kExclusive) == v1::LEASE_MODE_EXCLUSIVE);
static_assert(static_cast<int>(LeaseMode::kShared) == v1::LEASE_MODE_SHARED);
static_assert(static_cast<int>(LeaseMode::kPermit) == v1::LEASE_MODE_PERMIT);

// An Acquire's answer; `asked` is the kind asked for.
AcquireOutcome OutcomeOf(const v1::AcquireResponse& response, LeaseMode asked) {
  AcquireOutcome outcome;
  outcome.acquired = response.acquired();
  // The grant's kind, as the service says; the one asked for otherwise.
  outcome.mode = outcome.acquired ? static_cast<LeaseMode>(response.mode()) : asked;
  outcome.token = response.token();
  outcome.ttl = absl::Milliseconds(response.ttl_ms());
  outcome.waited = absl::Milliseconds(response.waited_ms());
  outcome.hold_count = response.hold_count();
  outcome.signature =
      TokenSignature{response.signature().key_id(), response.signature().mac()};
  outcome.lock_delay = response.reason() == v1::AcquireResponse::LOCK_DELAY;
  outcome.holder_token = response.holder_token();
  outcome.retry_after = absl::Milliseconds(response.retry_after_ms());
  return outcome;
}

v1::RenewRequest RenewRequestOf(const std::string& resource, uint64_t token,
                                absl::Duration ttl, const TokenSignature& signature,
                                LeaseMode mode) {
  v1::RenewRequest request;
  request.set_resource(resource);
  request.set_token(token);
  request.set_mode(static_cast<v1::LeaseMode>(mode));
  request.set_ttl_ms(absl::ToInt64Milliseconds(ttl));
  SetSignature(signature, request.mutable_signature());
  return request;
}

RenewOutcome RenewOutcomeOf(const v1::RenewResponse& response) {
  return RenewOutcome{
      absl::Milliseconds(response.ttl_ms()),
      TokenSignature{response.signature().key_id(), response.signature().mac()}};
}

v1::ReleaseRequest ReleaseRequestOf(const std::string& resource, uint64_t token,
                                    std::string request_id,
                                    const TokenSignature& signature, LeaseMode mode) {
  v1::ReleaseRequest request;
  request.set_resource(resource);
  request.set_token(token);
  request.set_mode(static_cast<v1::LeaseMode>(mode));
  SetSignature(signature, request.mutable_signature());
  request.set_request_id(request_id.empty() ? NewRequestId() : std::move(request_id));
  return request;
}

}  // namespace

LockClient::LockClient(std::shared_ptr<grpc::Channel> channel, ClientOptions options)
    : channel_(std::move(channel)),
      options_(options),
      watches_(options_.lock_transport == Transport::kStream
                   ? std::make_unique<LeaseWatches>()
                   : nullptr),
      stub_(std::make_unique<Stub>()) {
  stub_->rpc = v1::LockService::NewStub(channel_);
  stub_->unary = watches_ == nullptr;
  LockStream::Hooks hooks;
  if (watches_ != nullptr) {
    hooks.on_message = [watches = watches_.get()](v1::LockSessionResponse& message) {
      for (const v1::LeaseLost& lost : message.lost()) {
        watches->Ended(lost.resource(), lost.token(),
                       lost.reason() == v1::LeaseLost::RELEASED ? LeaseNotice::kReleased
                                                                : LeaseNotice::kExpired);
      }
    };
    hooks.on_end = [watches = watches_.get()] { watches->StreamEnded(); };
  }
  stub_->session =
      std::make_unique<LockStream>(stub_->rpc.get(), options_.max_stream_in_flight,
                                   "the lock service's Session stream", std::move(hooks));
}

LockClient::~LockClient() = default;

absl::Status LockClient::Retry(absl::Time deadline,
                               absl::FunctionRef<absl::Status()> attempt) {
  return RetryUnavailable(options_.retry, *options_.clock, deadline, attempt,
                          [this](absl::Duration at_most) {
                            PauseForChannel(*channel_, absl::Now() + at_most);
                          });
}

absl::StatusOr<std::unique_ptr<LockClient>> LockClient::Connect(
    const std::string& address, ClientOptions options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      NewClientChannel(address, options.tls);
  if (!channel.ok()) return channel.status();
  return std::make_unique<LockClient>(*std::move(channel), options);
}

absl::StatusOr<AcquireOutcome> LockClient::Acquire(const std::string& resource,
                                                   const std::string& holder,
                                                   const AcquireOptions& options) {
  v1::AcquireRequest request;
  request.set_resource(resource);
  v1::AcquireResponse response;
  if (absl::Status status = SendAcquire(holder, options, request, response); !status.ok())
    return status;
  return OutcomeOf(response, options.mode);
}

void LockClient::AcquireAsync(const std::string& resource, const std::string& holder,
                              const AcquireOptions& options, AcquireDone done) {
  v1::LockCall call;
  v1::AcquireRequest& request = *call.mutable_acquire();
  request.set_resource(resource);
  FillAcquire(holder, options, request);
  request.set_wait_ms(absl::ToInt64Milliseconds(
      absl::Ceil(std::max(options.wait, absl::ZeroDuration()), absl::Milliseconds(1))));
  stub_->session->Send(std::move(call), absl::Now() + options.wait + options_.rpc_timeout,
                       [done = std::move(done), mode = options.mode](
                           absl::StatusOr<v1::LockResult> result) mutable {
                         if (!result.ok()) return done(result.status());
                         v1::AcquireResponse response;
                         if (!GetResponse(*result, &response))
                           return done(LockWrongKind());
                         done(OutcomeOf(response, mode));
                       });
}

void LockClient::RenewAsync(const std::string& resource, uint64_t token,
                            absl::Duration ttl, const TokenSignature& signature,
                            LeaseMode mode, RenewDone done) {
  v1::RenewRequest request = RenewRequestOf(resource, token, ttl, signature, mode);
  if (stub_->unary) {
    // gRPC's callback API: the call's state lives until its callback.
    struct Call {
      grpc::ClientContext context;
      v1::RenewRequest request;
      v1::RenewResponse response;
      RenewDone done;
    };
    auto* call = new Call{{}, std::move(request), {}, std::move(done)};
    SetTimeout(call->context, options_.rpc_timeout);
    stub_->rpc->async()->Renew(&call->context, &call->request, &call->response,
                               [call](grpc::Status status) {
                                 std::unique_ptr<Call> owned(call);
                                 if (!status.ok()) {
                                   return owned->done(FromGrpcStatus(status));
                                 }
                                 owned->done(RenewOutcomeOf(owned->response));
                               });
    return;
  }
  v1::LockCall call;
  *call.mutable_renew() = std::move(request);
  stub_->session->Send(
      std::move(call), absl::Now() + options_.rpc_timeout,
      [done = std::move(done)](absl::StatusOr<v1::LockResult> result) mutable {
        if (!result.ok()) return done(result.status());
        v1::RenewResponse response;
        if (!GetResponse(*result, &response)) return done(LockWrongKind());
        done(RenewOutcomeOf(response));
      });
}

void LockClient::ReleaseAsync(const std::string& resource, uint64_t token,
                              ReleaseDone done, std::string request_id,
                              const TokenSignature& signature, LeaseMode mode) {
  v1::LockCall call;
  *call.mutable_release() =
      ReleaseRequestOf(resource, token, std::move(request_id), signature, mode);
  stub_->session->Send(
      std::move(call), absl::Now() + options_.rpc_timeout,
      [done = std::move(done)](absl::StatusOr<v1::LockResult> result) mutable {
        if (!result.ok()) return done(result.status());
        v1::ReleaseResponse response;
        if (!GetResponse(*result, &response)) return done(LockWrongKind());
        done(response.hold_count());
      });
}

void LockClient::FillAcquire(const std::string& holder, const AcquireOptions& options,
                             v1::AcquireRequest& request) {
  request.set_holder(holder);
  request.set_ttl_ms(absl::ToInt64Milliseconds(options.ttl));
  request.set_request_id(options.request_id.empty() ? NewRequestId()
                                                    : options.request_id);
  // As asked: the service, not the client, refuses a mode or permits out
  // of range (INVALID_ARGUMENT naming the field).
  request.set_mode(static_cast<v1::LeaseMode>(options.mode));
  request.set_permits(options.permits);
}

absl::Status LockClient::SendAcquire(const std::string& holder,
                                     const AcquireOptions& options,
                                     v1::AcquireRequest& request,
                                     v1::AcquireResponse& response) {
  FillAcquire(holder, options, request);
  Clock& clock = *options_.clock;
  const absl::Time wait_until = clock.Now() + options.wait;
  const absl::Time deadline =
      CallDeadline(options_, options.wait + options_.rpc_timeout, clock);
  return Retry(deadline, [&] {
    // A retry waits only what is left of the wait: the server never holds
    // the call longer than asked. Once nothing is left it is a try-lock,
    // which still takes back a place the first attempt had in the queue
    // (and ends it), or the lease granted to an attempt whose answer was
    // lost (same request_id).
    const absl::Duration wait = absl::Ceil(
        std::max(wait_until - clock.Now(), absl::ZeroDuration()), absl::Milliseconds(1));
    request.set_wait_ms(absl::ToInt64Milliseconds(wait));
    return stub_->Attempt(&v1::LockService::Stub::Acquire, request, &response,
                          AttemptTimeout(deadline, wait + options_.rpc_timeout, clock));
  });
}

absl::StatusOr<MultiAcquireOutcome> LockClient::AcquireMany(
    const std::vector<std::string>& resources, const std::string& holder,
    const AcquireOptions& options) {
  v1::AcquireRequest request;
  for (const std::string& resource : resources) request.add_resources(resource);
  v1::AcquireResponse response;
  if (absl::Status status = SendAcquire(holder, options, request, response); !status.ok())
    return status;
  MultiAcquireOutcome outcome;
  outcome.acquired = response.acquired();
  for (const v1::GrantedLease& granted : response.leases()) {
    AcquireOutcome lease;
    lease.acquired = true;
    lease.mode = static_cast<LeaseMode>(response.mode());
    lease.token = granted.token();
    lease.ttl = absl::Milliseconds(granted.ttl_ms());
    lease.waited = absl::Milliseconds(response.waited_ms());
    lease.hold_count = granted.hold_count();
    lease.signature =
        TokenSignature{granted.signature().key_id(), granted.signature().mac()};
    outcome.leases.push_back(std::move(lease));
  }
  outcome.busy_resource = response.busy_resource();
  outcome.lock_delay = response.reason() == v1::AcquireResponse::LOCK_DELAY;
  outcome.holder_token = response.holder_token();
  outcome.retry_after = absl::Milliseconds(response.retry_after_ms());
  return outcome;
}

absl::StatusOr<std::unique_ptr<MultiLease>> LockClient::AcquireMultiLease(
    const std::vector<std::string>& resources, const std::string& holder,
    const AcquireOptions& options, LeaseOptions lease_options) {
  // Valid from when the request was first sent, as AcquireLease's.
  if (lease_options.clock == nullptr) lease_options.clock = options_.clock;
  const absl::Time sent = lease_options.clock->Now();
  absl::StatusOr<MultiAcquireOutcome> outcome = AcquireMany(resources, holder, options);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->acquired || outcome->leases.size() != resources.size()) {
    return NotAcquiredError(absl::StrCat("none of the resources was acquired: '",
                                         outcome->busy_resource, "'"),
                            outcome->lock_delay, outcome->holder_token,
                            outcome->retry_after);
  }
  // One loss callback for the set, told once, by whichever lease is lost
  // first.
  struct OnLost {
    absl::Mutex mu;
    absl::AnyInvocable<void(const absl::Status&)> fn ABSL_GUARDED_BY(mu);
  };
  auto on_lost = std::make_shared<OnLost>();
  {
    absl::MutexLock lock(&on_lost->mu);
    on_lost->fn = std::move(lease_options.on_lost);
  }
  std::vector<std::unique_ptr<Lease>> leases;
  for (size_t i = 0; i < resources.size(); ++i) {
    AcquireOutcome& granted = outcome->leases[i];
    LeaseOptions each;
    each.renew_fraction = lease_options.renew_fraction;
    each.clock = lease_options.clock;
    each.on_lost = [on_lost](const absl::Status& why) {
      absl::AnyInvocable<void(const absl::Status&)> fn;
      {
        absl::MutexLock lock(&on_lost->mu);
        fn = std::move(on_lost->fn);
      }
      if (fn) fn(why);
    };
    leases.push_back(std::make_unique<Lease>(
        this, resources[i], granted.mode, granted.token, std::move(granted.signature),
        options.ttl, sent + granted.waited + granted.ttl, std::move(each)));
  }
  return std::make_unique<MultiLease>(std::move(leases));
}

absl::StatusOr<std::unique_ptr<Lease>> LockClient::AcquireLease(
    const std::string& resource, const std::string& holder,
    const AcquireOptions& options, LeaseOptions lease_options) {
  // The lease is valid from when the request was first sent, plus the time
  // the service says the answered attempt waited in line: the server's
  // expiry is measured from later, when it granted (to whichever attempt,
  // which was sent no earlier; after a restart, from when it restored the
  // lease for a full TTL). So a call that retried through an outage longer
  // than the TTL hands back a lease that is already lost, never one that
  // looks valid too long; one that waited its turn for longer than the TTL
  // gets a whole lease.
  if (lease_options.clock == nullptr) lease_options.clock = options_.clock;
  const absl::Time sent = lease_options.clock->Now();
  absl::StatusOr<AcquireOutcome> outcome = Acquire(resource, holder, options);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->acquired) {
    return NotAcquiredError(absl::StrCat("resource '", resource, "' was not acquired"),
                            outcome->lock_delay, outcome->holder_token,
                            outcome->retry_after);
  }
  return std::make_unique<Lease>(
      this, resource, outcome->mode, outcome->token, std::move(outcome->signature),
      options.ttl, sent + outcome->waited + outcome->ttl, std::move(lease_options));
}

absl::StatusOr<RenewOutcome> LockClient::Renew(const std::string& resource,
                                               uint64_t token, absl::Duration ttl,
                                               absl::Duration timeout,
                                               const TokenSignature& signature,
                                               LeaseMode mode) {
  const v1::RenewRequest request = RenewRequestOf(resource, token, ttl, signature, mode);
  v1::RenewResponse response;
  Clock& clock = *options_.clock;
  const absl::Time call_deadline =
      timeout == absl::InfiniteDuration()
          ? CallDeadline(options_, options_.rpc_timeout, clock)
          : clock.Now() + timeout;
  absl::Status status = Retry(call_deadline, [&] {
    return stub_->Attempt(&v1::LockService::Stub::Renew, request, &response,
                          AttemptTimeout(call_deadline, options_.rpc_timeout, clock));
  });
  if (!status.ok()) return status;
  return RenewOutcomeOf(response);
}

absl::StatusOr<uint32_t> LockClient::Release(const std::string& resource, uint64_t token,
                                             std::string request_id,
                                             const TokenSignature& signature,
                                             LeaseMode mode) {
  const v1::ReleaseRequest request =
      ReleaseRequestOf(resource, token, std::move(request_id), signature, mode);
  v1::ReleaseResponse response;
  absl::Status status = UnaryCall(&v1::LockService::Stub::Release, request, &response);
  if (!status.ok()) return status;
  return response.hold_count();
}

absl::StatusOr<LockState> LockClient::Describe(const std::string& resource) {
  v1::DescribeRequest request;
  request.set_resource(resource);
  v1::DescribeResponse response;
  absl::Status status = UnaryCall(&v1::LockService::Stub::Describe, request, &response);
  if (!status.ok()) return status;
  LockState state;
  state.held = response.held();
  state.holder = response.holder();
  state.token = response.token();
  state.remaining = absl::Milliseconds(response.remaining_ms());
  state.hold_count = response.hold_count();
  state.waiters = response.waiters();
  state.lock_delay_remaining = absl::Milliseconds(response.lock_delay_remaining_ms());
  state.mode = static_cast<LeaseMode>(response.mode());
  state.permits = response.permits();
  state.holders = response.holders();
  return state;
}

}  // namespace fencegate::client
