#include "fencegate/client/lease.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/lease_watches.h"
#include "common/errors.h"
#include "common/monotonic_wait.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::client {

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
      wake_(std::make_unique<MonotonicWait>()) {
  {
    absl::MutexLock lock(&mu_);
    signature_ = std::move(signature);
    valid_until_ = valid_until;
    next_renew_ = clock_->Now() + ttl_ * renew_fraction_;
    on_lost_ = std::move(options.on_lost);
    renewer_ = std::thread([this] { RenewLoop(); });
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
  }
  wake_->Notify();
  renewer_.join();
  Release().IgnoreError();  // best effort: otherwise the lease just expires
}

void Lease::RenewLoop() {
  absl::AnyInvocable<void(const absl::Status&)> lost_callback;
  absl::Status why;
  {
    absl::MutexLock lock(&mu_);
    auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !pushed_end_.ok() || renew_now_;
    };
    while (!stopping_ && !Ended()) {
      if ((lost_callback = CheckEndLocked())) break;
      const absl::Time now = clock_->Now();
      if (renew_now_) {  // the stream ended: attach the lease to the next one
        renew_now_ = false;
        next_renew_ = std::min(next_renew_, now);
      }
      const absl::Time wake = std::min(next_renew_, valid_until_);
      if (now < wake) {
        wake_->WaitFor(&mu_, absl::Condition(&woken), wake - now);
        continue;
      }
      absl::Status status = RenewLocked();
      if (IsLeaseLost(status)) {
        server_dropped_ = true;
        lost_callback = LoseLocked(status);
        break;
      }
      if (!status.ok()) {
        // Transient: try again soon, while the lease is still valid.
        next_renew_ = clock_->Now() + std::min(ttl_ * renew_fraction_ / 4,
                                               absl::Milliseconds(200));
      }
    }
    why = ended_;
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
  wake_->Notify();  // the lease may have ended: WaitLost() and RenewLoop() look
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
