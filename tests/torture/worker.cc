#include "tests/torture/worker.h"

#include <signal.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "absl/random/distributions.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/channel.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/multi_lease.h"
#include "grpcpp/security/credentials.h"
#include "tests/torture/worker_fields.h"

namespace fencegate::torture {
namespace {

constexpr char kCounterKey[] = "counter";
constexpr char kLogPrefix[] = "log/";

// Servers restart often here: the client library's channels reconnect
// within a second (client/channel.h).
std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  return client::NewClientChannel(address, grpc::InsecureChannelCredentials());
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
  if (options_.elect_rounds > 0) {
    // Proclaims make one attempt each, as the gateway calls below: a
    // Proclaim retried after its first attempt was applied (the service
    // restarted before answering) may be refused because the term ended
    // meanwhile, and "refused" must mean that nothing changed.
    client::ClientOptions once = lock_options;
    once.retry.max_attempts = 1;
    proclaims_ = std::make_unique<client::LockClient>(lock_channel_, once);
  }
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
  std::thread observer;
  if (options_.elect_rounds > 0) observer = std::thread([this] { Observe(); });
  while (control().quit.load() == 0) Round();
  if (observer.joinable()) observer.join();  // it sees quit within a second
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
  // A fresh holder name each round: a lease whose release was lost is never
  // taken again reentrantly (same token) by a later round.
  const std::string holder = absl::StrCat(options_.name, "-", round_);
  // Drawn only when the profile mixes kinds, so that the other profiles'
  // seeds make the choices they always made.
  const double kind = options_.shared_rounds + options_.permit_rounds +
                                  options_.multi_rounds + options_.elect_rounds >
                              0
                          ? absl::Uniform(random_, 0.0, 1.0)
                          : 1.0;
  if (kind < options_.shared_rounds) {
    ReaderRound(holder);
  } else if (kind < options_.shared_rounds + options_.permit_rounds) {
    PermitRound(holder);
  } else if (kind < options_.shared_rounds + options_.permit_rounds +
                        options_.multi_rounds &&
             options_.resources.size() >= 2) {
    MultiRound(holder);
  } else if (kind < options_.shared_rounds + options_.permit_rounds +
                        options_.multi_rounds + options_.elect_rounds) {
    ElectRound(holder);
  } else {
    WriterRound(holder);
  }
  SetPhase(WorkerPhase::kIdle);
}

client::AcquireOptions Worker::DrawAcquireOptions() {
  client::AcquireOptions acquire;
  acquire.ttl = absl::Milliseconds(absl::Uniform<int64_t>(
      random_, absl::ToInt64Milliseconds(options_.min_ttl),
      absl::ToInt64Milliseconds(options_.max_ttl) + 1));
  const int64_t max_wait_ms = absl::ToInt64Milliseconds(options_.max_wait);
  acquire.wait = absl::Milliseconds(
      absl::Uniform<int64_t>(random_, std::min<int64_t>(100, max_wait_ms), max_wait_ms + 1));
  return acquire;
}

size_t Worker::DrawResource() {
  return absl::Uniform<size_t>(random_, 0, options_.resources.size());
}

Fields Worker::AcquireFields(const std::string& resource, const std::string& holder,
                             const client::AcquireOptions& acquire) const {
  Fields fields = {{"resource", resource},
                   {"holder", holder},
                   {"ttl_ms", Str(absl::ToInt64Milliseconds(acquire.ttl))},
                   {"wait_ms", Str(absl::ToInt64Milliseconds(acquire.wait))}};
  if (acquire.mode != LeaseMode::kExclusive) {
    fields.push_back({"mode", LeaseModeName(acquire.mode)});
  }
  if (acquire.mode == LeaseMode::kPermit)
    fields.push_back({"permits", Str(acquire.permits)});
  return fields;
}

void Worker::RecordNotAcquired(const std::vector<uint64_t>& ops,
                               const absl::Status& status) {
  const bool refused = client::IsNotAcquired(status);
  for (uint64_t op : ops) {
    if (refused) {
      history_->Complete(op, "acquire", Outcome::kRefused,
                         {{"holder_token", Str(client::CurrentToken(status))}});
    } else {
      history_->Complete(op, "acquire", Outcome::kUnknown,
                         {{"error", ErrorText(status)}});
    }
  }
  if (!refused) Backoff();
}

std::unique_ptr<client::Lease> Worker::Acquire(size_t index, const std::string& holder,
                                               const client::AcquireOptions& acquire) {
  const std::string& resource =
      index < options_.resources.size() ? options_.resources[index] : options_.semaphore;
  SetPhase(WorkerPhase::kAcquiring);
  const uint64_t op =
      history_->Invoke("acquire", AcquireFields(resource, holder, acquire));
  absl::StatusOr<std::unique_ptr<client::Lease>> lease =
      lock_->AcquireLease(resource, holder, acquire);
  if (!lease.ok()) {
    RecordNotAcquired({op}, lease.status());
    return nullptr;
  }
  history_->Complete(op, "acquire", Outcome::kOk, {{"token", Str((*lease)->token())}});
  Holding(**lease, index, acquire.ttl);
  return *std::move(lease);
}

void Worker::Holding(const client::Lease& lease, size_t index, absl::Duration ttl) {
  control().token.store(lease.token());
  control().ttl_ms.store(static_cast<uint32_t>(absl::ToInt64Milliseconds(ttl)));
  control().resource.store(static_cast<uint32_t>(index));
  control().holding.store(1);
}

void Worker::WriterRound(const std::string& holder) {
  const size_t index = DrawResource();
  std::unique_ptr<client::Lease> lease = Acquire(index, holder, DrawAcquireOptions());
  if (lease == nullptr) return;
  Increment(*lease);
  Release(std::move(lease));
}

void Worker::Increment(client::Lease& lease) {
  std::optional<uint64_t> value = ReadCounter(lease);
  if (!value) return;
  Think();
  absl::Status valid = lease.Check();
  if (valid.ok()) {
    StopIfAsked();  // the worst moment: after the check, before the write
    WriteIncrement(lease, *value);
  } else {
    history_->Note("lease-lost-before-write",
                   {{"token", Str(lease.token())}, {"why", ErrorText(valid)}});
  }
}

void Worker::ReaderRound(const std::string& holder) {
  client::AcquireOptions acquire = DrawAcquireOptions();
  acquire.mode = LeaseMode::kShared;
  std::unique_ptr<client::Lease> lease = Acquire(DrawResource(), holder, acquire);
  if (lease == nullptr) return;
  if (ReadCounter(*lease)) {
    Think();
    absl::Status valid = lease->Check();
    if (valid.ok()) {
      // The reader's worst moment: paused here past its TTL, its second
      // read must be refused if a writer came in meanwhile.
      StopIfAsked();
      ReadCounter(*lease);
    }
  }
  Release(std::move(lease));
}

void Worker::PermitRound(const std::string& holder) {
  client::AcquireOptions acquire = DrawAcquireOptions();
  acquire.mode = LeaseMode::kPermit;
  acquire.permits = options_.permits;
  std::unique_ptr<client::Lease> lease =
      Acquire(options_.resources.size(), holder, acquire);  // the semaphore
  if (lease == nullptr) return;
  Think();
  if (lease->Check().ok()) StopIfAsked();
  Release(std::move(lease));
}

void Worker::MultiRound(const std::string& holder) {
  // Two distinct hot resources, in a random order; a try-lock half the time.
  const size_t first = DrawResource();
  size_t second = absl::Uniform<size_t>(random_, 0, options_.resources.size() - 1);
  if (second >= first) ++second;
  const std::vector<std::string> resources = {options_.resources[first],
                                              options_.resources[second]};
  client::AcquireOptions acquire = DrawAcquireOptions();
  if (absl::Bernoulli(random_, 0.5)) acquire.wait = absl::ZeroDuration();
  SetPhase(WorkerPhase::kAcquiring);
  std::vector<uint64_t> ops;
  for (const std::string& resource : resources) {
    ops.push_back(history_->Invoke("acquire", AcquireFields(resource, holder, acquire)));
  }
  absl::StatusOr<std::unique_ptr<client::MultiLease>> set =
      lock_->AcquireMultiLease(resources, holder, acquire);
  if (!set.ok()) {
    RecordNotAcquired(ops, set.status());
    return;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    history_->Complete(ops[i], "acquire", Outcome::kOk,
                       {{"token", Str((*set)->lease(i).token())}});
  }
  Holding((*set)->lease(0), first, acquire.ttl);
  for (size_t i = 0; i < (*set)->size(); ++i) Increment((*set)->lease(i));
  SetPhase(WorkerPhase::kReleasing);
  std::string tokens;
  for (size_t i = 0; i < (*set)->size(); ++i) {
    absl::StrAppend(&tokens, i == 0 ? "" : ",", (*set)->lease(i).token());
  }
  const uint64_t op = history_->Invoke(
      "release", {{"resources", absl::StrJoin(resources, ",")}, {"tokens", tokens}});
  absl::Status released = (*set)->Release();
  history_->Complete(op, "release", released.ok() ? Outcome::kOk : Outcome::kUnknown,
                     {{"error", released.ok() ? "" : ErrorText(released)}});
  control().holding.store(0);
  control().token.store(0);
}

void Worker::Think() {
  SetPhase(WorkerPhase::kThinking);
  absl::SleepFor(absl::Milliseconds(absl::Uniform<int64_t>(
      random_, 0, absl::ToInt64Milliseconds(options_.max_think) + 1)));
}

std::optional<uint64_t> Worker::ReadCounter(client::Lease& lease) {
  SetPhase(WorkerPhase::kReading);
  Fields call = {
      {"resource", lease.resource()}, {"token", Str(lease.token())}, {"gateway", path_}};
  if (lease.mode() != LeaseMode::kExclusive) {
    call.push_back({"mode", LeaseModeName(lease.mode())});
  }
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
  absl::StatusOr<client::MultiWriteResult> write;
  if (sql_ != nullptr) {
    write = sql_->MultiWrite(lease,
                             {{kCounterKey, next}, {absl::StrCat(kLogPrefix, id), next}});
  } else {
    std::vector<client::Mutation> mutations(2);
    mutations[0].key = kCounterKey;
    mutations[0].value = next;
    mutations[1].key = absl::StrCat(kLogPrefix, id);
    mutations[1].value = next;
    write = gateway_->MultiWrite(lease, mutations);
  }
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
}

}  // namespace fencegate::torture
