// Elections from C++ (fencegate/client/election.h): LockClient's election
// calls (on the Session stream, or unary, as the client's other calls;
// Observe is a stream of its own) and the Leadership they make.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/lock_stub.h"
#include "client/retry.h"
#include "client/wire.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/client_context.h"

namespace fencegate::client {
namespace {

namespace v1 = ::fencegate::v1;

// The longest wait one Campaign call asks for at first: the server's
// default --max_wait. A longer CampaignOptions::wait is several calls; a
// server with a smaller --max_wait refuses the wait naming its limit
// (ErrorInfo::max_value), and the calls after that ask for the limit.
constexpr absl::Duration kMostWaitPerCall = absl::Minutes(5);

// The server's --max_wait if `status` refused a Campaign's wait for being
// above it, else nullopt.
std::optional<absl::Duration> WaitLimitOf(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return std::nullopt;
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  if (!info.has_value() || info->field != "wait_ms" || info->max_value == 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(info->max_value);
}

ElectionState StateOf(const v1::ElectionChange& change) {
  ElectionState state;
  state.election = change.election();
  state.leader = change.leader();
  state.term = change.term();
  state.seq = change.seq();
  state.value = change.value();
  state.candidate = change.candidate();
  state.remaining = absl::Milliseconds(change.remaining_ms());
  state.changed_at = absl::FromUnixMillis(change.changed_at_unix_ms());
  return state;
}

}  // namespace

Leadership::Leadership(LockClient* client, std::string election,
                       std::unique_ptr<Lease> lease)
    : client_(client), election_(std::move(election)), lease_(std::move(lease)) {}

absl::StatusOr<uint64_t> Leadership::Proclaim(const std::string& value) {
  return client_->Proclaim(election_, term(), value, lease_->signature());
}

absl::Status Leadership::Resign() {
  // The service ends the term whatever its holds, or refuses a term that
  // had ended (ABORTED LEASE_LOST: deposed). Either way it is over there,
  // so the Lease stops renewing; its release finds nothing left to free.
  absl::Status resigned = client_->Resign(election_, term(), lease_->signature());
  absl::Status released = lease_->Release();
  return resigned.ok() ? released : resigned;
}

absl::StatusOr<std::unique_ptr<Leadership>> LockClient::Campaign(
    const std::string& election, const std::string& candidate, const std::string& value,
    const CampaignOptions& options, LeaseOptions lease_options) {
  if (lease_options.clock == nullptr) lease_options.clock = options_.clock;
  Clock& clock = *options_.clock;
  v1::CampaignRequest request;
  request.set_election(election);
  request.set_candidate(candidate);
  request.set_value(value);
  request.set_ttl_ms(absl::ToInt64Milliseconds(options.ttl));
  request.set_request_id(options.request_id.empty() ? NewRequestId()
                                                    : options.request_id);
  const absl::Time wait_until = options.wait == absl::InfiniteDuration()
                                    ? absl::InfiniteFuture()
                                    : clock.Now() + options.wait;
  absl::Duration most_per_call = kMostWaitPerCall;
  for (;;) {
    // As AcquireLease: the term is valid from when its call was sent, plus
    // the time the service says it waited in line.
    const absl::Time sent = lease_options.clock->Now();
    const absl::Duration wait =
        std::clamp(wait_until - clock.Now(), absl::ZeroDuration(), most_per_call);
    const absl::Time call_deadline =
        CallDeadline(options_, wait + options_.rpc_timeout, clock);
    v1::AcquireResponse response;
    absl::Status status = Retry(call_deadline, [&] {
      // Each attempt waits only what is left.
      request.set_wait_ms(absl::ToInt64Milliseconds(
          std::clamp(wait_until - clock.Now(), absl::ZeroDuration(), wait)));
      return stub_->Attempt(
          &v1::LockService::Stub::Campaign, request, &response,
          AttemptTimeout(call_deadline, wait + options_.rpc_timeout, clock));
    });
    if (std::optional<absl::Duration> limit = WaitLimitOf(status);
        limit.has_value() && *limit < wait) {
      most_per_call = *limit;  // nothing was applied: ask again within it
      continue;
    }
    if (!status.ok()) return status;
    if (response.acquired()) {
      TokenSignature signature{response.signature().key_id(), response.signature().mac()};
      auto lease = std::make_unique<Lease>(
          this, election, LeaseMode::kExclusive, response.token(), std::move(signature),
          options.ttl,
          sent + absl::Milliseconds(response.waited_ms() + response.ttl_ms()),
          std::move(lease_options));
      return std::make_unique<Leadership>(this, election, std::move(lease));
    }
    if (clock.Now() >= wait_until) {
      const bool delay = response.reason() == v1::AcquireResponse::LOCK_DELAY;
      absl::Status refused = absl::FailedPreconditionError(absl::StrCat(
          "not elected in election '", election, "': ",
          delay ? std::string("held back by a lock-delay after a term expired")
                : absl::StrCat("it is led in term ", response.holder_token()),
          "; retry in ",
          absl::FormatDuration(absl::Milliseconds(response.retry_after_ms())),
          ", campaign with a longer wait, or observe it"));
      ErrorInfo info;
      info.current_token = response.holder_token();
      SetErrorInfo(refused, info);
      return refused;
    }
  }
}

absl::StatusOr<ElectionState> LockClient::Leader(const std::string& election) {
  v1::LeaderRequest request;
  request.set_election(election);
  v1::LeaderResponse response;
  absl::Status status = UnaryCall(&v1::LockService::Stub::Leader, request, &response);
  if (!status.ok()) return status;
  return StateOf(response.state());
}

absl::StatusOr<uint64_t> LockClient::Proclaim(const std::string& election, uint64_t term,
                                              const std::string& value,
                                              const TokenSignature& signature) {
  v1::ProclaimRequest request;
  request.set_election(election);
  request.set_term(term);
  request.set_value(value);
  SetSignature(signature, request.mutable_signature());
  v1::ProclaimResponse response;
  // A retried Proclaim that was applied says the same again: one more seq.
  absl::Status status = UnaryCall(&v1::LockService::Stub::Proclaim, request, &response);
  if (!status.ok()) return status;
  return response.seq();
}

absl::Status LockClient::Resign(const std::string& election, uint64_t term,
                                const TokenSignature& signature) {
  v1::ResignRequest request;
  request.set_election(election);
  request.set_term(term);
  SetSignature(signature, request.mutable_signature());
  v1::ResignResponse response;
  return UnaryCall(&v1::LockService::Stub::Resign, request, &response);
}

absl::Status LockClient::Observe(const std::string& election,
                                 absl::FunctionRef<bool(const ElectionState&)> on_change,
                                 absl::Duration timeout, uint64_t after_term,
                                 uint64_t after_seq) {
  const absl::Time until = timeout == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                               : absl::Now() + timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    grpc::ClientContext ctx;
    if (until != absl::InfiniteFuture()) ctx.set_deadline(absl::ToChronoTime(until));
    v1::ObserveRequest request;
    request.set_election(election);
    request.set_after_term(after_term);
    request.set_after_seq(after_seq);
    std::unique_ptr<grpc::ClientReader<v1::ObserveResponse>> reader =
        stub_->rpc->Observe(&ctx, request);
    v1::ObserveResponse message;
    bool stopped = false;
    while (!stopped && reader->Read(&message)) {
      backoff = absl::Milliseconds(100);  // the stream works
      for (const v1::ElectionChange& change : message.changes()) {
        after_term = change.term();
        after_seq = change.seq();
        if (!on_change(StateOf(change))) {
          stopped = true;
          break;
        }
      }
    }
    if (stopped) {
      ctx.TryCancel();
      reader->Finish().ok();  // cancelled by us
      return absl::OkStatus();
    }
    absl::Status ended = FromGrpcStatus(reader->Finish());
    if (absl::Now() >= until) return absl::OkStatus();
    // The service went away (a stream it ended while stopping may come
    // back CANCELLED rather than UNAVAILABLE: never this caller's doing,
    // which returned above) or cut a slow observer off: observe again,
    // after the last change seen. Anything else is the caller's to see.
    if (!absl::IsUnavailable(ended) && !absl::IsResourceExhausted(ended) &&
        !absl::IsCancelled(ended)) {
      return ended;
    }
    absl::SleepFor(std::min(backoff, until - absl::Now()));
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

}  // namespace fencegate::client
