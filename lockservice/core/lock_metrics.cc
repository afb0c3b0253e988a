#include "lockservice/core/lock_metrics.h"

#include <string>
#include <utility>
#include <vector>

namespace fencegate::lockservice {

LockManagerMetrics LockManagerMetrics::Register(metrics::Registry& registry) {
  LockManagerMetrics m;
  auto& grants = registry.AddCounter(
      "fencegate_lock_grants_total",
      "Leases granted: immediate (free on arrival), waited (from the queue), reentrant "
      "(the holder acquiring again).",
      {"kind"});
  m.grants = {&grants.Get({"immediate"}), &grants.Get({"waited"}),
              &grants.Get({"reentrant"})};
  auto& not_granted = registry.AddCounter(
      "fencegate_lock_not_granted_total",
      "Acquires answered without a lease: held (try-lock on a held or queued resource), "
      "lock_delay (try-lock during the lock-delay after an expiry), wait_timeout (the "
      "wait ran out).",
      {"reason"});
  m.not_granted = {&not_granted.Get({"held"}), &not_granted.Get({"lock_delay"}),
                   &not_granted.Get({"wait_timeout"})};
  m.releases = &registry
                    .AddCounter("fencegate_lock_releases_total",
                                "Leases ended by their holder's release.")
                    .Get();
  m.expirations = &registry
                       .AddCounter("fencegate_lock_expirations_total",
                                   "Leases ended by their TTL: each one a holder that "
                                   "paused, crashed or was cut off while holding.")
                       .Get();
  m.renewals =
      &registry.AddCounter("fencegate_lock_renewals_total", "Renewals accepted.").Get();
  auto& lost = registry.AddCounter(
      "fencegate_lock_lease_lost_total",
      "Renewals and releases refused with ABORTED (lease lost): the token no longer "
      "holds the lease.",
      {"op"});
  m.lease_lost = {&lost.Get({"renew"}), &lost.Get({"release"})};
  m.wait_seconds =
      &registry
           .AddHistogram("fencegate_lock_wait_seconds",
                         "Time a granted waiter spent in the queue, in seconds.",
                         metrics::WaitBounds())
           .Get();
  m.commit_batch_size =
      &registry
           .AddHistogram("fencegate_lock_commit_batch_size",
                         "Requests answered by one store commit (group commit).",
                         metrics::BatchBounds())
           .Get();
  m.commit_seconds =
      &registry
           .AddHistogram("fencegate_lock_commit_seconds",
                         "Time of one store commit (SQLite: one fsync; etcd: one txn), "
                         "in seconds.",
                         metrics::LatencyBounds())
           .Get();
  m.commit_failures = &registry
                           .AddCounter("fencegate_lock_commit_failures_total",
                                       "Store commits that failed (their requests got "
                                       "UNAVAILABLE; the state was reloaded).")
                           .Get();
  return m;
}

LeadershipMetrics LeadershipMetrics::Register(metrics::Registry& registry) {
  LeadershipMetrics m;
  m.leader = &registry
                  .AddGauge("fencegate_lock_leader",
                            "1 while this instance leads the replicated lock service, "
                            "0 while it is a standby.")
                  .Get();
  m.term = &registry
                .AddGauge("fencegate_lock_leader_term",
                          "The term this instance leads (the leader key's etcd create "
                          "revision); 0 when it does not lead.")
                .Get();
  m.terms_started = &registry
                         .AddCounter("fencegate_lock_terms_started_total",
                                     "Terms this instance won and served as leader.")
                         .Get();
  auto& ended = registry.AddCounter(
      "fencegate_lock_terms_ended_total",
      "Terms of this instance that ended: stopped (shutdown), session_lost (its etcd "
      "lease could not be proven alive), stepped_down (a commit failed).",
      {"reason"});
  m.terms_ended = {&ended.Get({"stopped"}), &ended.Get({"session_lost"}),
                   &ended.Get({"stepped_down"})};
  m.leader_changes =
      &registry
           .AddCounter("fencegate_lock_leader_changes_total",
                       "Changes of leader this instance saw (itself or another "
                       "instance becoming leader, or the leader going away).")
           .Get();
  return m;
}

void AddLockStateGauges(metrics::Registry& registry,
                        std::function<std::optional<LockStateFigures>()> read) {
  // One read per scrape would need a shared cache; these are four cheap
  // reads under the manager's mutex instead.
  using Field = uint64_t LockStateFigures::*;
  struct Gauge {
    const char* name;
    const char* help;
    Field field;
  };
  static const Gauge kGauges[] = {
      {"fencegate_lock_leases_held", "Leases held now.", &LockStateFigures::leases_held},
      {"fencegate_lock_waiters",
       "Acquire calls queued now (parked, or kept for their client's retry).",
       &LockStateFigures::waiters},
      {"fencegate_lock_resources",
       "Resources tracked now: held, waited on or in lock-delay (at most "
       "--max_resources).",
       &LockStateFigures::resources},
      {"fencegate_lock_last_token",
       "The token counter: the last fencing token (or expiry mark) issued.",
       &LockStateFigures::last_token},
  };
  for (const Gauge& g : kGauges) {
    const Field field = g.field;
    registry.AddCollected(g.name, g.help, metrics::MetricType::kGauge, {},
                          [read, field](std::vector<metrics::CollectedSample>& out) {
                            if (std::optional<LockStateFigures> figures = read()) {
                              out.push_back({{}, static_cast<double>((*figures).*field)});
                            }
                          });
  }
}

}  // namespace fencegate::lockservice
