#include "lockservice/etcd/etcd_session.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/base/log.h"

namespace fencegate::lockservice {
namespace {

// After a failed keep-alive, try again this soon (the client moves on to
// the next etcd member).
constexpr absl::Duration kRetryAfterFailure = absl::Milliseconds(100);

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdSession>> EtcdSession::Start(
    etcd::EtcdClient* client, Clock* clock, absl::Duration ttl,
    absl::Duration timeout, absl::AnyInvocable<void()> on_lost) {
  const absl::Time sent = clock->Now();
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> granted =
      client->LeaseGrant(ttl, absl::Now() + timeout);
  if (!granted.ok()) return granted.status();
  std::unique_ptr<EtcdSession> session(
      new EtcdSession(client, clock, granted->id(), absl::Seconds(granted->ttl()),
                      sent, std::move(on_lost)));
  return session;
}

EtcdSession::EtcdSession(etcd::EtcdClient* client, Clock* clock, int64_t lease_id,
                         absl::Duration ttl, absl::Time granted_at,
                         absl::AnyInvocable<void()> on_lost)
    : client_(client),
      clock_(clock),
      lease_id_(lease_id),
      ttl_(ttl),
      margin_(std::max(ttl / 10, absl::Milliseconds(100))),
      lifeline_(std::make_shared<Lifeline>()) {
  {
    absl::MutexLock lock(&lifeline_->mu);
    lifeline_->session = this;
  }
  absl::MutexLock lock(&mu_);
  alive_until_ = AliveUntil(granted_at);
  on_lost_ = std::move(on_lost);
  ArmTimer(alive_until_);
  keeper_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fg-etcd-keeper");
    KeepAliveLoop();
  });
}

EtcdSession::~EtcdSession() {
  {
    // Waits for a timer callback in progress; later ones do nothing.
    absl::MutexLock lock(&lifeline_->mu);
    lifeline_->session = nullptr;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.Notify();
  keeper_.join();
}

bool EtcdSession::alive() {
  absl::MutexLock lock(&mu_);
  return !lost_;
}

absl::Time EtcdSession::alive_until() {
  absl::MutexLock lock(&mu_);
  return lost_ ? absl::InfinitePast() : alive_until_;
}

void EtcdSession::Revoke(absl::Duration timeout) {
  Lose("revoked", /*notify=*/false);
  absl::Status status = client_->LeaseRevoke(lease_id_, absl::Now() + timeout);
  if (!status.ok() && status.code() != absl::StatusCode::kNotFound) {
    LogWarning("could not revoke etcd lease %x (it expires by itself): %s",
               lease_id_, status.ToString());
  }
}

void EtcdSession::ArmTimer(absl::Time at) {
  clock_->RunAt(at, [lifeline = lifeline_] {
    absl::ReaderMutexLock lock(&lifeline->mu);
    if (lifeline->session != nullptr) lifeline->session->OnTimer();
  });
}

void EtcdSession::OnTimer() {
  {
    absl::MutexLock lock(&mu_);
    if (lost_) return;
    if (clock_->Now() < alive_until_) {
      ArmTimer(alive_until_);  // extended since this timer was set
      return;
    }
  }
  Lose(absl::StrCat("no keep-alive was acknowledged within its TTL of ",
                    absl::FormatDuration(ttl_), " minus a margin of ",
                    absl::FormatDuration(margin_)),
       /*notify=*/true);
}

void EtcdSession::KeepAliveLoop() {
  absl::Duration wait = ttl_ / 3;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || lost_;
      };
      wake_.WaitFor(&mu_, absl::Condition(&done), wait);
      if (stopping_ || lost_) return;
    }
    const absl::Time sent = clock_->Now();
    absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> answer =
        client_->LeaseKeepAliveOnce(lease_id_, absl::Now() + ttl_ / 3);
    if (answer.ok() && answer->ttl() <= 0) {
      Lose("etcd says the lease no longer exists", /*notify=*/true);
      return;
    }
    if (answer.ok()) {
      absl::MutexLock lock(&mu_);
      alive_until_ = std::max(
          alive_until_, sent + absl::Seconds(answer->ttl()) - margin_);
      wait = ttl_ / 3;
    } else {
      LogWarning("etcd lease %x: keep-alive failed, retrying: %s", lease_id_,
                 answer.status().ToString());
      wait = kRetryAfterFailure;
    }
  }
}

void EtcdSession::Lose(const std::string& why, bool notify) {
  absl::AnyInvocable<void()> callback;
  {
    absl::MutexLock lock(&mu_);
    if (lost_) return;
    lost_ = true;
    callback = std::move(on_lost_);
  }
  wake_.Notify();
  if (!notify) return;
  LogWarning("etcd lease %x lost: %s", lease_id_, why);
  if (callback) callback();
}

}  // namespace fencegate::lockservice
