#include "tests/torture/worker.h"

#include <signal.h>

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "fencegate/client/errors.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::torture {
namespace {

constexpr char kCounterKey[] = "counter";
constexpr char kLogPrefix[] = "log/";

// Servers restart often here: the client library's channels reconnect
// within a second (client/channel.h).
std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  return client::NewClientChannel(address, grpc::InsecureChannelCredentials());
}

std::string Str(uint64_t v) { return absl::StrCat(v); }

std::string ErrorText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message());
}

// ABORTED is the server saying "no, nothing changed"; anything else that is
// not OK may or may not have been applied.
Outcome FailureOutcome(const absl::Status& status) {
  return status.code() == absl::StatusCode::kAborted ? Outcome::kRefused : Outcome::kUnknown;
}

}  // namespace

Worker::Worker(WorkerOptions options, std::unique_ptr<HistoryWriter> history,
               std::unique_ptr<SharedWorkerControl> control)
    : options_(std::move(options)),
      history_(std::move(history)),
      control_(std::move(control)),
      path_(options_.postgres.empty() ? options_.gateway : kSqlPath),
      random_(options_.seed) {
  lock_channel_ = Channel(options_.lockservice);
  // Lock-service calls keep the library's retries: they retry across a
  // restart of the lock service until their call_timeout, and the retry of
  // an Acquire keeps its request_id, so it takes back its place in the
  // queue instead of leaving a ghost waiter that holds the resource for
  // --waiter_reattach_grace.
  const client::Transport transport =
      options_.streams ? client::Transport::kStream : client::Transport::kUnary;
  client::ClientOptions lock_options;
  lock_options.lock_transport = transport;
  lock_ = std::make_unique<client::LockClient>(lock_channel_, lock_options);
  if (!options_.postgres.empty()) {
    sql_ = std::make_unique<SqlCounter>(options_.postgres,
                                        options_.planted_bug == kSqlSkipsFenceBug);
    return;
  }
  gateway_channel_ = Channel(options_.gateway);
  client::ClientOptions gateway_options;
  gateway_options.rpc_timeout = options_.gateway_timeout;
  gateway_options.gateway_transport = transport;
  // One attempt per call, so every outcome recorded is that attempt's own.
  gateway_options.retry.max_attempts = 1;
  gateway_ = std::make_unique<client::GatewayClient>(gateway_channel_, gateway_options);
}

void Worker::Run() {
  history_->Note("start", {{"seed", Str(options_.seed)},
                           {"calls", options_.streams ? "stream" : "unary"}});
  while (control().quit.load() == 0) Round();
  SetPhase(WorkerPhase::kDone);
  history_->Note("quit", {{"rounds", Str(round_)}});
}

void Worker::SetPhase(WorkerPhase phase) {
  control().phase.store(static_cast<uint32_t>(phase));
}

void Worker::Backoff() {
  // A channel whose server went away fails calls at once while it
  // reconnects, and with blocking calls nobody drives the reconnection but
  // gRPC's backup poller (every 5 s). Waiting for both to connect drives
  // them, and is the pause: it ends once both are connected, after at most
  // 0.1-0.5 s (jittered, so the workers do not come back in step).
  const absl::Time until =
      absl::Now() + absl::Milliseconds(absl::Uniform(random_, 100, 500));
  if (gateway_channel_ == nullptr) {  // a SQL worker: it reconnects on its next call
    client::PauseForChannels({lock_channel_.get()}, until);
  } else {
    client::PauseForChannels({lock_channel_.get(), gateway_channel_.get()}, until);
  }
}

void Worker::Round() {
  ++round_;
  control().rounds.store(round_);
  const size_t index = absl::Uniform<size_t>(random_, 0, options_.resources.size());
  const std::string& resource = options_.resources[index];
  client::AcquireOptions acquire;
  acquire.ttl = absl::Milliseconds(absl::Uniform<int64_t>(
      random_, absl::ToInt64Milliseconds(options_.min_ttl),
      absl::ToInt64Milliseconds(options_.max_ttl) + 1));
  const int64_t max_wait_ms = absl::ToInt64Milliseconds(options_.max_wait);
  acquire.wait = absl::Milliseconds(
      absl::Uniform<int64_t>(random_, std::min<int64_t>(100, max_wait_ms), max_wait_ms + 1));
  // A fresh holder name each round: a lease whose release was lost is never
  // taken again reentrantly (same token) by a later round.
  const std::string holder = absl::StrCat(options_.name, "-", round_);

  SetPhase(WorkerPhase::kAcquiring);
  const uint64_t op = history_->Invoke(
      "acquire", {{"resource", resource},
                  {"holder", holder},
                  {"ttl_ms", Str(absl::ToInt64Milliseconds(acquire.ttl))}});
  absl::StatusOr<std::unique_ptr<client::Lease>> lease =
      lock_->AcquireLease(resource, holder, acquire);
  if (!lease.ok()) {
    if (client::IsNotAcquired(lease.status())) {
      history_->Complete(op, "acquire", Outcome::kRefused,
                         {{"holder_token", Str(client::CurrentToken(lease.status()))}});
    } else {
      history_->Complete(op, "acquire", Outcome::kUnknown,
                         {{"error", ErrorText(lease.status())}});
      Backoff();
    }
    SetPhase(WorkerPhase::kIdle);
    return;
  }
  const uint64_t token = (*lease)->token();
  history_->Complete(op, "acquire", Outcome::kOk, {{"token", Str(token)}});
  control().token.store(token);
  control().ttl_ms.store(static_cast<uint32_t>(absl::ToInt64Milliseconds(acquire.ttl)));
  control().resource.store(static_cast<uint32_t>(index));
  control().holding.store(1);

  if (std::optional<uint64_t> value = ReadCounter(**lease)) {
    SetPhase(WorkerPhase::kThinking);
    absl::SleepFor(absl::Milliseconds(absl::Uniform<int64_t>(
        random_, 0, absl::ToInt64Milliseconds(options_.max_think) + 1)));
    absl::Status valid = (*lease)->Check();
    if (valid.ok()) {
      StopIfAsked();  // the worst moment: after the check, before the write
      WriteIncrement(**lease, *value);
    } else {
      history_->Note("lease-lost-before-write",
                     {{"token", Str(token)}, {"why", ErrorText(valid)}});
    }
  }
  Release(*std::move(lease));
}

std::optional<uint64_t> Worker::ReadCounter(client::Lease& lease) {
  SetPhase(WorkerPhase::kReading);
  const Fields call = {
      {"resource", lease.resource()}, {"token", Str(lease.token())}, {"gateway", path_}};
  const uint64_t op = history_->Invoke("read", call);
  absl::StatusOr<client::ReadResult> read = sql_ != nullptr
                                                ? sql_->Read(lease, kCounterKey)
                                                : gateway_->Read(lease, kCounterKey);
  if (!read.ok()) {
    const Outcome outcome = FailureOutcome(read.status());
    history_->Complete(op, "read", outcome,
                       {{"max_token", Str(client::CurrentToken(read.status()))},
                        {"error", ErrorText(read.status())}});
    if (outcome == Outcome::kUnknown) Backoff();
    return std::nullopt;
  }
  uint64_t value = 0;
  if (read->found && !absl::SimpleAtoi(read->value, &value)) {
    history_->Complete(op, "read", Outcome::kOk,
                       {{"max_token", Str(read->max_token)}, {"garbage", read->value}});
    return std::nullopt;
  }
  history_->Complete(op, "read", Outcome::kOk,
                     {{"value", Str(value)}, {"max_token", Str(read->max_token)}});
  return value;
}

void Worker::StopIfAsked() {
  if (control().stop_before_write.exchange(0) == 0) return;
  history_->Note("stop-before-write", {{"token", Str(control().token.load())}});
  SetPhase(WorkerPhase::kStoppedBeforeWrite);
  raise(SIGSTOP);  // the whole process, its renewal thread included
  history_->Note("resumed", {});
}

void Worker::WriteIncrement(client::Lease& lease, uint64_t value) {
  SetPhase(WorkerPhase::kWriting);
  const std::string id = absl::StrCat(options_.name, "-", round_);
  const std::string next = Str(value + 1);
  const uint64_t op = history_->Invoke("write", {{"resource", lease.resource()},
                                                 {"token", Str(lease.token())},
                                                 {"value", next},
                                                 {"log_id", id},
                                                 {"gateway", path_}});
  absl::StatusOr<client::MultiWriteResult> write =
      sql_ != nullptr
          ? sql_->MultiWrite(lease,
                             {{kCounterKey, next}, {absl::StrCat(kLogPrefix, id), next}})
          : gateway_->MultiWrite(
                lease,
                {client::Mutation{kCounterKey, next, std::nullopt},
                 client::Mutation{absl::StrCat(kLogPrefix, id), next, std::nullopt}});
  if (write.ok()) {
    history_->Complete(op, "write", Outcome::kOk, {{"max_token", Str(write->max_token)}});
    return;
  }
  const Outcome outcome = FailureOutcome(write.status());
  history_->Complete(op, "write", outcome,
                     {{"max_token", Str(client::CurrentToken(write.status()))},
                      {"error", ErrorText(write.status())}});
  if (outcome == Outcome::kUnknown) Backoff();
}

void Worker::Release(std::unique_ptr<client::Lease> lease) {
  SetPhase(WorkerPhase::kReleasing);
  const uint64_t op = history_->Invoke(
      "release", {{"resource", lease->resource()}, {"token", Str(lease->token())}});
  absl::Status released = lease->Release();  // OK too if it was already lost
  history_->Complete(op, "release", released.ok() ? Outcome::kOk : Outcome::kUnknown,
                     {{"error", released.ok() ? "" : ErrorText(released)}});
  lease.reset();
  control().holding.store(0);
  control().token.store(0);
  SetPhase(WorkerPhase::kIdle);
}

}  // namespace fencegate::torture
