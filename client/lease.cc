#include "fencegate/client/lease.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "client/lease_watches.h"
#include "common/base/errors.h"
#include "common/base/monotonic_wait.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::client {

// Lets the clock's timers and the renewals' callbacks, which may come after
// the Lease is gone, reach it only while it lives: Run() calls in unless
// Detach() began, and Detach() waits for the calls under way.
struct Lease::Anchor {
  explicit Anchor(Lease* l) : lease(l) {}

  template <typename Fn>
  void Run(Fn fn) {
    Lease* live;
    {
      absl::MutexLock lock(&mu);
      if ((live = lease) == nullptr) return;
      ++running;
    }
    fn(*live);
    absl::MutexLock lock(&mu);
    --running;
  }

  void Detach() {
    absl::MutexLock lock(&mu);
    lease = nullptr;
    auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu) { return running == 0; };
    mu.Await(absl::Condition(&idle));
  }

  absl::Mutex mu;
  Lease* lease ABSL_GUARDED_BY(mu);
  int running ABSL_GUARDED_BY(mu) = 0;
};

namespace {

// When to renew next, `interval` after `from`: less up to a tenth of it,
// at random, so that leases taken together spread out; then rounded up to
// a tick (a tenth of the interval, at most 100 ms), so that the renewals
// that fall due close together go out together (their timers fire back to
// back, and the Session stream sends calls made during a write in one
// message, which the service commits in one batch).
absl::Time RenewalAt(absl::Time from, absl::Duration interval) {
  thread_local absl::BitGen bits;
  const absl::Time at = from + interval * (1.0 - absl::Uniform(bits, 0.0, 0.1));
  const int64_t tick = std::max<int64_t>(
      1, absl::ToInt64Nanoseconds(std::min(interval / 10, absl::Milliseconds(100))));
  const int64_t ns = absl::ToUnixNanos(at);
  return absl::FromUnixNanos((ns / tick + (ns % tick != 0 ? 1 : 0)) * tick);
}

}  // namespace

Lease::Lease(LockClient* client, std::string resource, LeaseMode mode, uint64_t token,
             TokenSignature signature, absl::Duration ttl, absl::Time valid_until,
             LeaseOptions options)
    : client_(client),
      resource_(std::move(resource)),
      mode_(mode),
      token_(token),
      ttl_(ttl),
      renew_fraction_(options.renew_fraction),
      clock_(options.clock != nullptr ? options.clock : client->options().clock),
      wake_(std::make_unique<MonotonicWait>()),
      anchor_(std::make_shared<Anchor>(this)) {
  {
    absl::MutexLock lock(&mu_);
    signature_ = std::move(signature);
    valid_until_ = valid_until;
    next_renew_ = RenewalAt(clock_->Now(), ttl_ * renew_fraction_);
    on_lost_ = std::move(options.on_lost);
    ArmLocked(NextLookLocked());
  }
  // Without mu_: the listener takes it, under the registry's lock.
  if (LeaseWatches* watches = client_->lease_watches(); watches != nullptr) {
    watch_ = watches->Watch(resource_, token_,
                            [this](LeaseNotice notice) { Hear(notice); });
  }
}

Lease::~Lease() {
  watch_.reset();  // without mu_: the listener takes it
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    clock_->Cancel(timer_);
  }
  // A step or a renewal's answer under way finishes first; later ones find
  // no Lease.
  anchor_->Detach();
  wake_->Notify();
  Release().IgnoreError();  // best effort: otherwise the lease just expires
}

void Lease::ArmLocked(absl::Time at) {
  clock_->Cancel(timer_);
  timer_ =
      clock_->RunAt(at, [anchor = anchor_] { anchor->Run([](Lease& l) { l.Step(); }); });
}

absl::Time Lease::NextLookLocked() const {
  // While a renewal is under way its answer sets the next one; the timer
  // still looks at the end of validity, which passes whatever the answer.
  return renewing_ ? valid_until_ : std::min(next_renew_, valid_until_);
}

void Lease::Step() {
  absl::AnyInvocable<void(const absl::Status&)> lost_callback;
  absl::Status why;
  absl::Time sent;
  TokenSignature signature;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || Ended()) return;
    // A lapse or a pushed end first: no renewal of a lease already lost.
    lost_callback = CheckEndLocked();
    why = ended_;
    if (lost_callback == nullptr && !Ended()) {
      sent = clock_->Now();
      if (renew_now_) {  // the stream ended: attach the lease to the next one
        renew_now_ = false;
        next_renew_ = std::min(next_renew_, sent);
      }
      if (renewing_ || sent < next_renew_) {
        ArmLocked(NextLookLocked());
        return;
      }
      renewing_ = true;
      signature = signature_;
      ArmLocked(NextLookLocked());
    }
  }
  if (lost_callback != nullptr || !why.ok()) {
    Notify(std::move(lost_callback), why);
    return;
  }
  client_->RenewAsync(resource_, token_, ttl_, signature, mode_,
                      [anchor = anchor_, sent](absl::StatusOr<RenewOutcome> outcome) {
                        anchor->Run([&](Lease& l) { l.Renewed(sent, outcome); });
                      });
}

void Lease::Renewed(absl::Time sent, const absl::StatusOr<RenewOutcome>& outcome) {
  absl::AnyInvocable<void(const absl::Status&)> lost_callback;
  absl::Status why;
  {
    absl::MutexLock lock(&mu_);
    renewing_ = false;
    if (stopping_ || Ended()) return;
    if (outcome.ok()) {
      valid_until_ = std::max(valid_until_, sent + outcome->ttl);
      next_renew_ = RenewalAt(sent, outcome->ttl * renew_fraction_);
      if (!outcome->signature.empty()) signature_ = outcome->signature;
    } else if (IsLeaseLost(outcome.status())) {
      server_dropped_ = true;
      lost_callback = LoseLocked(outcome.status());
    } else {
      // Transient: again soon, while the lease is still valid.
      next_renew_ =
          clock_->Now() + std::min(ttl_ * renew_fraction_ / 4, absl::Milliseconds(200));
    }
    if (lost_callback == nullptr) lost_callback = CheckEndLocked();
    why = ended_;
    if (!Ended()) ArmLocked(NextLookLocked());
  }
  Notify(std::move(lost_callback), why);
}

void Lease::Notify(absl::AnyInvocable<void(const absl::Status&)> callback,
                   const absl::Status& why) {
  if (callback) {
    callback(why);
    absl::MutexLock lock(&mu_);
    notifying_ = false;
  }
  wake_->Notify();  // the lease may have ended: WaitLost() looks
}

absl::Status Lease::RenewLocked() {
  const absl::Time sent = clock_->Now();
  // Retries (UNAVAILABLE) until the lease would lapse: no point renewing a
  // lapsed lease.
  const absl::Duration until_lapse = valid_until_ - sent;
  const TokenSignature signature = signature_;
  mu_.Unlock();
  absl::StatusOr<RenewOutcome> renewed =
      client_->Renew(resource_, token_, ttl_, until_lapse, signature, mode_);
  mu_.Lock();
  if (!renewed.ok()) return renewed.status();
  valid_until_ = std::max(valid_until_, sent + renewed->ttl);
  next_renew_ = sent + renewed->ttl * renew_fraction_;
  if (!renewed->signature.empty()) signature_ = std::move(renewed->signature);
  return absl::OkStatus();
}

absl::AnyInvocable<void(const absl::Status&)> Lease::LoseLocked(absl::Status why) {
  if (Ended()) return nullptr;
  ended_ = std::move(why);
  absl::AnyInvocable<void(const absl::Status&)> callback = std::move(on_lost_);
  on_lost_ = nullptr;
  notifying_ = static_cast<bool>(callback);
  return callback;
}

void Lease::Hear(LeaseNotice notice) {
  {
    absl::MutexLock lock(&mu_);
    if (notice == LeaseNotice::kStreamEnded) {
      renew_now_ = true;
    } else if (pushed_end_.ok()) {
      pushed_end_ = LeaseLostError(
          absl::StrCat("lease on '", resource_, "' with token ", token_,
                       notice == LeaseNotice::kExpired
                           ? " expired on the lock service: its TTL ran out before a "
                             "renewal reached it"
                           : " was released by a call from elsewhere",
                       " (pushed on the lock service's Session stream). Stop writing "
                       "and acquire the lock again"),
          0);
    }
    // The timer acts on it: on_lost must not run here, under the
    // registry's lock.
    if (!stopping_ && !Ended()) ArmLocked(clock_->Now());
  }
  wake_->Notify();
}

absl::AnyInvocable<void(const absl::Status&)> Lease::CheckEndLocked() {
  if (Ended()) return nullptr;
  if (!pushed_end_.ok()) {
    server_dropped_ = true;  // nothing left to release
    return LoseLocked(pushed_end_);
  }
  if (clock_->Now() < valid_until_) return nullptr;
  return LoseLocked(LeaseLostError(
      absl::StrCat("lease on '", resource_, "' with token ", token_,
                   " lapsed: no renewal was acknowledged within its TTL of ",
                   absl::FormatDuration(ttl_),
                   " (lock service unreachable, or this process was paused). "
                   "Stop writing and acquire the lock again"),
      0));
}

bool Lease::lost() { return !Check().ok(); }

absl::Status Lease::Check() {
  absl::AnyInvocable<void(const absl::Status&)> callback;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    callback = CheckEndLocked();
    status = ended_;
  }
  Notify(std::move(callback), status);
  return status;
}

absl::Time Lease::valid_until() {
  absl::MutexLock lock(&mu_);
  return valid_until_;
}

bool Lease::WaitLost(absl::Duration timeout) {
  const absl::Time give_up = clock_->Now() + timeout;
  for (;;) {
    Check().IgnoreError();  // notices a lapse; runs on_lost if this call lost it
    absl::MutexLock lock(&mu_);
    // Lost, and on_lost has run: what returning true promises.
    auto notified = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return Ended() && !notifying_;
    };
    if (notified()) return true;
    const absl::Time now = clock_->Now();
    if (now >= give_up) return false;
    // Wake at the end of validity at the latest, when Check() will see it.
    const absl::Time wake = Ended() ? give_up : std::min(give_up, valid_until_);
    wake_->WaitFor(&mu_, absl::Condition(&notified), wake - now);
  }
}

absl::Status Lease::Renew() {
  absl::AnyInvocable<void(const absl::Status&)> callback;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if ((callback = CheckEndLocked()) != nullptr || Ended()) {
      status = ended_;
    } else {
      status = RenewLocked();
      if (IsLeaseLost(status)) {
        server_dropped_ = true;
        callback = LoseLocked(status);
      }
    }
  }
  Notify(std::move(callback), status);
  return status;
}

TokenSignature Lease::signature() const {
  absl::MutexLock lock(&mu_);
  return signature_;
}

absl::Status Lease::Release() {
  {
    absl::MutexLock lock(&mu_);
    if (released_ || server_dropped_) return absl::OkStatus();
    released_ = true;
    stopping_ = true;
    // A lease that only lapsed here may still be held on the server (a
    // restarted service restores it for a whole TTL): released all the
    // same, by its token, which cannot free anyone else's lease.
    if (!Ended()) {
      ended_ = absl::FailedPreconditionError(absl::StrCat(
          "lease on '", resource_, "' with token ", token_, " was released"));
    }
  }
  wake_->Notify();
  absl::StatusOr<uint32_t> released =
      client_->Release(resource_, token_, /*request_id=*/"", signature(), mode_);
  // LEASE_LOST: it had already lapsed on the server; nothing to release.
  if (released.ok() || IsLeaseLost(released.status())) return absl::OkStatus();
  return released.status();
}

}  // namespace fencegate::client
