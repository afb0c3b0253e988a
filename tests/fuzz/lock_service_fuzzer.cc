// Fuzz target: the lock service's request handlers, minus gRPC. Each input
// (fuzz_frames.h) is a config byte and a sequence of steps: Acquire, Renew,
// Release and Describe requests as wire bytes, parsed and handled as
// LockServiceImpl does (RejectUnknownFields, signature checks,
// lock_requests.h, the LockManager on SQLite), and the harness's own steps:
// advance the fake clock, restart (the manager stops, the store reopens), a
// client that abandons a parked Acquire. LockModel (lock_model.h) judges
// every reply; the fence feed's positions must grow; every call gets exactly
// one reply. Config bits: 1 signed tokens, 2 a lock-delay of 1 s, 4 a
// max_hold of 5 s.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/signing_keys.h"
#include "common/token_signer.h"
#include "common/validation.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/fence_feed.h"
#include "lockservice/lock_manager.h"
#include "lockservice/lock_requests.h"
#include "lockservice/sqlite_lock_store.h"
#include "tests/fuzz/fuzz_frames.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/lock_model.h"
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
  }

  // As a crash would, minus losing what was already decided: parked
  // Acquires end with UNAVAILABLE, their rows stay for their retries.
  void Stop() {
    stopping_ = true;
    manager_.reset();
    Settle();
    stopping_ = false;
    store_.reset();
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
  bool SignIfAsked(bool sign, const std::string& resource, uint64_t token,
                   v1::TokenSignature* signature) {
    if (!sign || signer_ == nullptr) return false;
    absl::StatusOr<TokenSignature> valid = signer_->Sign(resource, token);
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
    if (signer_ != nullptr) FUZZ_CHECK(signer_->CheckCanSign().ok(), "cannot sign");
    const LockManager::CallId id = manager_->NewCallId();
    Call& call = calls_[id];
    call.step = LockStep::kAcquire;
    call.acquire = lockservice::AcquireArgsFromProto(request);
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
          FUZZ_CHECK(signer->Verify(resource, r->token, response.signature().key_id(),
                                    response.signature().mac()).ok(),
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
    const bool signed_validly =
        SignIfAsked(sign, request.resource(), request.token(), request.mutable_signature());
    lockservice::RenewArgs args = lockservice::RenewArgsFromProto(request);
    absl::Status authorized = lockservice::CheckTokenSignature(
        signer_.get(), limits_, args.resource, args.token, request.signature());
    CheckErrorShape("renew", authorized, Denied(!signed_validly));
    if (!authorized.ok()) return;
    const LockManager::CallId id = manager_->NewCallId();
    calls_[id] = Call{LockStep::kRenew, {}, args, {}, "", clock_.Now()};
    manager_->Renew(args, [this, id, signer = signer_.get(), args](
                              absl::StatusOr<lockservice::RenewResult> r) {
      if (r.ok()) {
        v1::RenewResponse response;
        lockservice::FillRenewResponse(signer, args.resource, args.token, *r, &response);
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
    const bool signed_validly =
        SignIfAsked(sign, request.resource(), request.token(), request.mutable_signature());
    lockservice::ReleaseArgs args = lockservice::ReleaseArgsFromProto(request);
    absl::Status authorized = lockservice::CheckTokenSignature(
        signer_.get(), limits_, args.resource, args.token, request.signature());
    CheckErrorShape("release", authorized, Denied(!signed_validly));
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

  // The client of the index-th parked Acquire goes away.
  void Cancel(uint8_t index) {
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
  }

  const LockLimits limits_;
  const std::unique_ptr<TokenSigner> signer_;
  const std::string db_path_;
  testing::FakeClock clock_;
  lockservice::FenceFeed feed_;
  const std::shared_ptr<FeedRecorder> feed_events_ = std::make_shared<FeedRecorder>();
  std::unique_ptr<lockservice::SqliteLockStore> store_;
  std::unique_ptr<LockManager> manager_;
  bool stopping_ = false;

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
