// Fuzz target: the lock service's request handlers, minus gRPC. Each input
// (fuzz_frames.h) is a config byte and a sequence of steps: Acquire, Renew,
// Release and Describe requests as wire bytes, parsed and handled as
// LockServiceCalls does (RejectUnknownFields, signature checks,
// lock_requests.h, the LockManager on SQLite), and the harness's own steps:
// advance the fake clock, restart (the manager stops, the store reopens), a
// client that abandons a parked Acquire. LockModel (lock_model.h) judges
// every reply; the fence feed's positions must grow; every call gets exactly
// one reply. Config bits: 1 signed tokens, 2 a lock-delay of 1 s, 4 a
// max_hold of 5 s, 8 every call over one Session stream (LockSession,
// lockservice/core/lock_session.h, on a fake transport; a restart or a cancel
// starts a new stream): answers are judged the same way, in the order the
// stream brings them, and its pushes must be exact: every lease the stream
// acquired or renewed and that ended (all releases are its own) is pushed
// EXPIRED, once, and no other.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/base/errors.h"
#include "common/core/token_signer.h"
#include "common/core/validation.h"
#include "common/signing/signing_keys.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_requests.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "tests/fuzz/fuzz_frames.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/lock_model.h"
#include "tests/fuzz/lock_stream_client.h"
#include "tests/testing/fake_clock.h"

namespace fencegate::fuzz {
namespace {

namespace v1 = ::fencegate::v1;
using lockservice::LockLimits;
using lockservice::LockManager;

// Small limits, so short inputs reach them.
LockLimits FuzzLimits(uint8_t config) {
  LockLimits limits;
  limits.max_ttl = absl::Seconds(30);
  limits.max_wait = absl::Seconds(20);
  limits.max_resource_bytes = 32;
  limits.max_holder_bytes = 32;
  limits.max_request_id_bytes = 16;
  limits.max_waiters_per_resource = 4;
  limits.max_waiters_total = 8;
  limits.max_resources = 16;
  limits.remembered_request_ids = 3;
  limits.waiter_reattach_grace = absl::Seconds(2);
  if (config & 2) limits.lock_delay = absl::Seconds(1);
  if (config & 4) limits.max_hold = absl::Seconds(5);
  return limits;
}

// Fence positions, as grant-time fencing receives them.
class FeedRecorder final : public lockservice::FenceFeed::Subscriber {
 public:
  void OnEvents(const std::vector<lockservice::FenceEvent>& events) override {
    absl::MutexLock lock(&mu_);
    events_.insert(events_.end(), events.begin(), events.end());
  }
  void OnClose() override {}
  std::vector<lockservice::FenceEvent> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(events_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<lockservice::FenceEvent> events_ ABSL_GUARDED_BY(mu_);
};

class LockHarness {
 public:
  explicit LockHarness(uint8_t config)
      : limits_(FuzzLimits(config)),
        signer_(FuzzSigner(config & 1)),
        streamed_(config & 8),
        db_path_(ScratchDir() + "/locks.db"),
        model_(limits_) {
    RemoveDatabase(db_path_);
    feed_.Subscribe(feed_events_);
    Start();
  }

  // Stops the manager: every call must have had its one reply.
  ~LockHarness() {
    Stop();
    FUZZ_CHECK(calls_.empty(), calls_.size(), " calls never answered");
    RemoveDatabase(db_path_);
  }

  void Step(FrameReader& in) {
    const uint8_t kind = in.Byte();
    const bool sign = kind & kSigned;
    switch (static_cast<LockStep>((kind & ~kSigned) % static_cast<uint8_t>(LockStep::kCount))) {
      case LockStep::kAcquire:
        return Acquire(in.Payload());
      case LockStep::kRenew:
        return Renew(in.Payload(), sign);
      case LockStep::kRelease:
        return Release(in.Payload(), sign);
      case LockStep::kDescribe:
        return Describe(in.Payload());
      case LockStep::kAdvance: {
        const int ms = in.Byte() | in.Byte() << 8;
        return Advance(absl::Milliseconds(ms));
      }
      case LockStep::kRestart:
        Stop();
        Start();
        return Restarted();
      case LockStep::kCancel:
        return Cancel(in.Byte());
      case LockStep::kCount:
        break;
    }
  }

 private:
  // One call in flight and what judging its reply needs.
  struct Call {
    LockStep step;
    lockservice::AcquireArgs acquire;
    lockservice::RenewArgs renew;
    lockservice::ReleaseArgs release;
    std::string resource;  // Describe
    absl::Time started;
    bool abandoned = false;
    // Streamed Renew or Release whose signature the session must refuse.
    bool denied = false;
  };
  // A reply, in the order the manager delivered them.
  struct Reply {
    LockManager::CallId id;
    absl::Status status;
    std::function<void(LockModel&, const Call&, absl::Time)> judge;
  };

  void Start() {
    absl::StatusOr<std::unique_ptr<lockservice::SqliteLockStore>> store =
        lockservice::SqliteLockStore::Open(db_path_);
    FUZZ_CHECK(store.ok(), store.status().ToString());
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<LockManager>> manager =
        LockManager::Create(store_.get(), &clock_, limits_, &feed_);
    FUZZ_CHECK(manager.ok(), manager.status().ToString());
    manager_ = *std::move(manager);
    if (streamed_) StartStream();
  }

  // As a crash would, minus losing what was already decided: parked
  // Acquires end with UNAVAILABLE, their rows stay for their retries.
  void Stop() {
    stopping_ = true;
    if (stream_ != nullptr) {
      manager_->Shutdown();  // the stream answers its parked calls, then ends
      Settle();
      FUZZ_CHECK(stream_->finished().has_value(),
                 "a stream outlived its manager's shutdown");
      EndStream();
    }
    manager_.reset();
    Settle();
    stopping_ = false;
    store_.reset();
  }

  void StartStream() {
    stream_ = std::make_unique<LockStreamClient>(manager_, signer_.get());
    listened_.clear();
  }
  void EndStream() {
    stream_.reset();
    FUZZ_CHECK(testing::StreamHarness::ProtocolErrors() == 0,
               "the session broke the transport's rules");
  }

  // Sends `call` on the stream, for `record`, and settles.
  void SendOnStream(v1::LockCall call, Call record) {
    const uint64_t id = next_request_id_++;
    call.set_request_id(id);
    calls_[id] = std::move(record);
    FUZZ_CHECK(stream_->Send(call), "the session stopped reading a client that reads");
    Settle();
  }

  // The stream's answers, queued as replies to judge in the order they
  // came, and its pushes checked: each for a lease it listens to, EXPIRED,
  // once (after the settle, the model must agree the lease ended).
  void TakeStream(std::vector<uint64_t>* pushed) {
    for (const v1::LockSessionResponse& message : stream_->TakeMessages()) {
      for (const v1::LockResult& result : message.results()) TakeAnswer(result);
      for (const v1::LeaseLost& lost : message.lost()) {
        FUZZ_CHECK(listened_.erase(lost.token()) == 1, "lease ", lost.token(),
                   " pushed lost, but the stream does not listen to it");
        FUZZ_CHECK(lost.reason() == v1::LeaseLost::EXPIRED, "lease ", lost.token(),
                   " pushed as ", v1::LeaseLost::Reason_Name(lost.reason()),
                   "; every release of this run is the stream's own");
        pushed->push_back(lost.token());
      }
    }
  }

  void TakeAnswer(const v1::LockResult& result) {
    auto it = calls_.find(result.request_id());
    FUZZ_CHECK(it != calls_.end(), "an answer to ", result.request_id(),
               ", which is not in flight");
    const Call& call = it->second;
    const uint64_t id = result.request_id();
    if (call.denied) {
      CheckErrorShape("a refused signature", FromRpcStatus(result.error()), Denied(true));
      FUZZ_CHECK(result.result_case() == v1::LockResult::kError,
                 "a bad signature passed");
      calls_.erase(it);
      return;
    }
    switch (call.step) {
      case LockStep::kAcquire: {
        absl::StatusOr<lockservice::AcquireResult> r = AcquireResultOf(result);
        if (r.ok() && r->acquired) {
          listened_.insert(r->token);
          if (signer_ != nullptr) {
            FUZZ_CHECK(signer_
                           ->Verify(call.acquire.resource, r->token, r->mode,
                                    result.acquire().signature().key_id(),
                                    result.acquire().signature().mac())
                           .ok(),
                       "a streamed grant's signature does not verify");
          }
        }
        Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
                 model.OnAcquire(call.acquire, call.started, now, r);
               }});
        return;
      }
      case LockStep::kRenew: {
        absl::StatusOr<lockservice::RenewResult> r = RenewResultOf(result);
        if (r.ok()) listened_.insert(call.renew.token);
        Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
                 model.OnRenew(call.renew, now, r);
               }});
        return;
      }
      case LockStep::kRelease: {
        absl::StatusOr<lockservice::ReleaseResult> r = ReleaseResultOf(result);
        // Its own end: answered, never pushed.
        if (r.ok() && r->hold_count == 0) listened_.erase(call.release.token);
        Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
                 model.OnRelease(call.release, now, r);
               }});
        return;
      }
      default: {
        absl::StatusOr<lockservice::ResourceInfo> r = DescribeResultOf(result);
        Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
                 model.OnDescribe(call.resource, now, r);
               }});
        return;
      }
    }
  }

  // The stream goes away: settled first, so the only calls still in flight
  // are parked Acquires, which its end cancels before anything can grant
  // them; their answers are dropped with it. A new stream follows.
  void CancelStream() {
    Settle();
    for (auto it = calls_.begin(); it != calls_.end();) {
      it = it->second.step == LockStep::kAcquire ? calls_.erase(it) : std::next(it);
    }
    stream_->Cancel();
    EndStream();
    StartStream();
    Settle();
  }

  void Restarted() {
    std::map<std::string, lockservice::ResourceInfo> info;
    for (const auto& [name, token] : model_.Held()) info[name] = Probe(name);
    model_.OnRestart(clock_.Now(), info);
  }

  // A Describe the harness makes for itself (not judged as a call).
  lockservice::ResourceInfo Probe(const std::string& resource) {
    absl::StatusOr<lockservice::ResourceInfo> result = absl::InternalError("no reply");
    manager_->Describe(resource, [&result](auto r) { result = std::move(r); });
    manager_->Sync();
    FUZZ_CHECK(result.ok(), "describe of '", resource, "': ", result.status().ToString());
    return *result;
  }

  // A signature check may refuse only a request not signed validly.
  AllowedErrors Denied(bool may_be_bad) const {
    AllowedErrors allowed;
    allowed.denied = signer_ != nullptr && may_be_bad;
    return allowed;
  }

  // Signs the request's token as the lock service would have, when asked to
  // and signing is on (a client holding the lease has this signature).
  bool SignIfAsked(bool sign, const std::string& resource, uint64_t token, int mode,
                   v1::TokenSignature* signature) {
    if (!sign || signer_ == nullptr) return false;
    absl::StatusOr<TokenSignature> valid = signer_->Sign(
        resource, token, LeaseModeFromNumber(mode).value_or(LeaseMode::kExclusive));
    FUZZ_CHECK(valid.ok(), valid.status().ToString());
    signature->set_key_id(valid->key_id);
    signature->set_mac(valid->mac);
    return true;
  }

  // Queues a reply, from the manager's callback, to be judged in delivery
  // order.
  void Queue(Reply reply) {
    absl::MutexLock lock(&mu_);
    inbox_.push_back(std::move(reply));
  }

  void Acquire(absl::string_view payload) {
    v1::AcquireRequest request;
    if (!ParseRequest(payload, request)) return;
    // LockModel (lock_model.h) judges exclusive leases only: every Acquire
    // asks for one, whatever kind the input named.
    request.clear_mode();
    request.clear_permits();
    if (signer_ != nullptr) FUZZ_CHECK(signer_->CheckCanSign().ok(), "cannot sign");
    if (stream_ != nullptr) {
      v1::LockCall call;
      *call.mutable_acquire() = request;
      Call record;
      record.step = LockStep::kAcquire;
      record.acquire = *lockservice::AcquireArgsFromProto(request);  // mode known
      record.started = clock_.Now();
      return SendOnStream(std::move(call), std::move(record));
    }
    const LockManager::CallId id = manager_->NewCallId();
    Call& call = calls_[id];
    call.step = LockStep::kAcquire;
    call.acquire = *lockservice::AcquireArgsFromProto(request);
    call.started = clock_.Now();
    const TokenSigner* signer = signer_.get();
    manager_->Acquire(id, call.acquire, [this, id, signer, resource = call.acquire.resource](
                                            absl::StatusOr<lockservice::AcquireResult> r) {
      absl::Status status = r.status();
      if (r.ok()) {
        v1::AcquireResponse response;
        status = lockservice::FillAcquireResponse(signer, resource, *r, &response);
        RoundTrip(response);
        if (signer != nullptr && r->acquired) {
          FUZZ_CHECK(
              signer
                  ->Verify(resource, r->token, r->mode,
                           response.signature().key_id(), response.signature().mac())
                  .ok(),
              "a grant's signature does not verify");
        }
      }
      Queue({id, status, [r](LockModel& model, const Call& call, absl::Time now) {
               model.OnAcquire(call.acquire, call.started, now, r);
             }});
    });
    Settle();
  }

  void Renew(absl::string_view payload, bool sign) {
    v1::RenewRequest request;
    if (!ParseRequest(payload, request)) return;
    // A mode the server does not know is INVALID_ARGUMENT (lock_requests.h).
    if (!LeaseModeFromNumber(request.mode())) request.set_mode(v1::LEASE_MODE_EXCLUSIVE);
    const bool signed_validly = SignIfAsked(sign, request.resource(), request.token(),
                                            request.mode(), request.mutable_signature());
    lockservice::RenewArgs args = lockservice::RenewArgsFromProto(request);
    absl::Status authorized =
        lockservice::CheckTokenSignature(signer_.get(), limits_, args.resource,
                                         args.token, request.mode(), request.signature());
    CheckErrorShape("renew", authorized, Denied(!signed_validly));
    if (stream_ != nullptr) {
      v1::LockCall call;
      *call.mutable_renew() = request;
      Call record{LockStep::kRenew, {}, args, {}, "", clock_.Now()};
      record.denied = !authorized.ok();
      return SendOnStream(std::move(call), std::move(record));
    }
    if (!authorized.ok()) return;
    const LockManager::CallId id = manager_->NewCallId();
    calls_[id] = Call{LockStep::kRenew, {}, args, {}, "", clock_.Now()};
    manager_->Renew(args, [this, id, signer = signer_.get(), args, mode = request.mode()](
                              absl::StatusOr<lockservice::RenewResult> r) {
      if (r.ok()) {
        v1::RenewResponse response;
        lockservice::FillRenewResponse(signer, args.resource, args.token, mode, *r,
                                       &response);
        RoundTrip(response);
      }
      Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
               model.OnRenew(call.renew, now, r);
             }});
    });
    Settle();
  }

  void Release(absl::string_view payload, bool sign) {
    v1::ReleaseRequest request;
    if (!ParseRequest(payload, request)) return;
    if (!LeaseModeFromNumber(request.mode())) request.set_mode(v1::LEASE_MODE_EXCLUSIVE);
    const bool signed_validly = SignIfAsked(sign, request.resource(), request.token(),
                                            request.mode(), request.mutable_signature());
    lockservice::ReleaseArgs args = lockservice::ReleaseArgsFromProto(request);
    absl::Status authorized =
        lockservice::CheckTokenSignature(signer_.get(), limits_, args.resource,
                                         args.token, request.mode(), request.signature());
    CheckErrorShape("release", authorized, Denied(!signed_validly));
    if (stream_ != nullptr) {
      v1::LockCall call;
      *call.mutable_release() = request;
      Call record{LockStep::kRelease, {}, {}, args, "", clock_.Now()};
      record.denied = !authorized.ok();
      return SendOnStream(std::move(call), std::move(record));
    }
    if (!authorized.ok()) return;
    const LockManager::CallId id = manager_->NewCallId();
    calls_[id] = Call{LockStep::kRelease, {}, {}, args, "", clock_.Now()};
    manager_->Release(args, [this, id](absl::StatusOr<lockservice::ReleaseResult> r) {
      if (r.ok()) {
        v1::ReleaseResponse response;
        lockservice::FillReleaseResponse(*r, &response);
        RoundTrip(response);
      }
      Queue({id, r.status(), [r](LockModel& model, const Call& call, absl::Time now) {
               model.OnRelease(call.release, now, r);
             }});
    });
    Settle();
  }

  void Describe(absl::string_view payload) {
    v1::DescribeRequest request;
    if (!ParseRequest(payload, request)) return;
    if (stream_ != nullptr) {
      v1::LockCall call;
      *call.mutable_describe() = request;
      return SendOnStream(std::move(call), Call{LockStep::kDescribe, {}, {}, {},
                                                request.resource(), clock_.Now()});
    }
    const LockManager::CallId id = manager_->NewCallId();
    calls_[id] = Call{LockStep::kDescribe, {}, {}, {}, request.resource(), clock_.Now()};
    manager_->Describe(request.resource(),
                       [this, id](absl::StatusOr<lockservice::ResourceInfo> r) {
                         if (r.ok()) {
                           v1::DescribeResponse response;
                           lockservice::FillDescribeResponse(*r, &response);
                           RoundTrip(response);
                         }
                         Queue({id, r.status(),
                                [r](LockModel& model, const Call& call, absl::Time now) {
                                  model.OnDescribe(call.resource, now, r);
                                }});
                       });
    Settle();
  }

  // The client of the index-th parked Acquire goes away (streamed: the
  // stream, with every parked Acquire of it).
  void Cancel(uint8_t index) {
    if (stream_ != nullptr) return CancelStream();
    std::vector<LockManager::CallId> parked;
    for (const auto& [id, call] : calls_) {
      if (call.step == LockStep::kAcquire) parked.push_back(id);
    }
    if (parked.empty()) return;
    const LockManager::CallId id = parked[index % parked.size()];
    calls_[id].abandoned = true;
    manager_->CancelAcquire(id);
    Settle();
  }

  // Moves the clock one timer at a time, so every decision has its exact
  // time.
  void Advance(absl::Duration by) {
    const absl::Time target = clock_.Now() + by;
    for (int timers = 0;; ++timers) {
      FUZZ_CHECK(timers < 100000, "timers keep firing at one instant");
      std::optional<absl::Time> next = clock_.NextDeadline();
      if (!next || *next > target) break;
      clock_.AdvanceBy(std::max(*next - clock_.Now(), absl::ZeroDuration()));
      Settle();
    }
    clock_.AdvanceBy(target - clock_.Now());
    Settle();
  }

  // Waits for every reply decided so far and judges them in delivery order.
  void Settle() {
    if (manager_ != nullptr) manager_->Sync();
    std::vector<uint64_t> pushed;
    if (stream_ != nullptr) {
      // The first Sync's batch has flushed its streams by then.
      if (manager_ != nullptr) manager_->Sync();
      TakeStream(&pushed);
    }
    const absl::Time now = clock_.Now();
    std::vector<Reply> replies;
    {
      absl::MutexLock lock(&mu_);
      replies.swap(inbox_);
    }
    // A Release that ends a lease hands it to the next waiter before its
    // own reply is queued: judge the release first.
    std::stable_partition(replies.begin(), replies.end(), [this](const Reply& reply) {
      auto it = calls_.find(reply.id);
      return it != calls_.end() && it->second.step == LockStep::kRelease;
    });
    for (Reply& reply : replies) {
      auto it = calls_.find(reply.id);
      FUZZ_CHECK(it != calls_.end(), "call ", reply.id, " answered twice");
      const Call& call = it->second;
      const bool acquire = call.step == LockStep::kAcquire;
      AllowedErrors allowed;
      allowed.aborted = call.step == LockStep::kRenew || call.step == LockStep::kRelease;
      allowed.exhausted = acquire;
      // A retry with the same request id takes over a parked call.
      allowed.cancelled = acquire && (call.abandoned || !call.acquire.request_id.empty());
      allowed.unavailable = acquire && stopping_;
      CheckErrorShape("call", reply.status, allowed);
      reply.judge(model_, call, now);
      calls_.erase(it);
    }
    for (const lockservice::FenceEvent& event : feed_events_->Take()) {
      FUZZ_CHECK(event.position > last_position_, "fence position ", event.position,
                 " published after ", last_position_);
      FUZZ_CHECK(event.kind == lockservice::FenceEvent::Kind::kExpired
                     ? event.position > event.token
                     : event.position == event.token,
                 "fence event of token ", event.token, " at position ", event.position);
      last_position_ = event.position;
    }
    model_.Expire(now);
    if (stream_ == nullptr) return;
    // A lease the stream listens to is pushed exactly when it ends.
    std::set<uint64_t> held;
    for (const auto& [name, token] : model_.Held()) held.insert(token);
    for (uint64_t token : pushed) {
      FUZZ_CHECK(held.count(token) == 0, "lease ", token,
                 " pushed lost while still held");
    }
    if (stopping_) return;  // a stopped manager tells its streams nothing more
    for (uint64_t token : listened_) {
      FUZZ_CHECK(held.count(token) == 1, "lease ", token,
                 " ended without its stream being told");
    }
  }

  const LockLimits limits_;
  const std::unique_ptr<TokenSigner> signer_;
  const bool streamed_;  // config bit 8
  const std::string db_path_;
  testing::FakeClock clock_;
  lockservice::FenceFeed feed_;
  const std::shared_ptr<FeedRecorder> feed_events_ = std::make_shared<FeedRecorder>();
  std::unique_ptr<lockservice::SqliteLockStore> store_;
  std::shared_ptr<LockManager> manager_;
  bool stopping_ = false;
  // Streamed (config bit 8): the stream, its next request id, and the
  // tokens it listens to (acquired or renewed on it, not yet ended).
  std::unique_ptr<LockStreamClient> stream_;
  uint64_t next_request_id_ = 1;
  std::set<uint64_t> listened_;

  absl::Mutex mu_;
  std::vector<Reply> inbox_ ABSL_GUARDED_BY(mu_);
  std::map<LockManager::CallId, Call> calls_;  // unanswered
  LockModel model_;
  uint64_t last_position_ = 0;
};

}  // namespace
}  // namespace fencegate::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fencegate::fuzz::FrameReader in(data, size);
  fencegate::fuzz::LockHarness harness(in.Byte());
  while (!in.done()) harness.Step(in);
  return 0;
}
