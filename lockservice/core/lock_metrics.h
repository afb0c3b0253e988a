// What the lock service counts (docs/observability.md lists every metric):
// the counters and histograms the LockManager bumps where it decides
// (LockManagerMetrics), those of leadership on etcd (LeadershipMetrics),
// and the gauges read from the current manager at each scrape
// (AddLockStateGauges). No label carries a resource or holder name.
//
// The structs hold pointers into a metrics::Registry (common/metrics/),
// resolved once by Register(); the manager and the etcd node only bump
// them, so a server's counters run on across terms and managers. A null
// LockManagerMetrics* means metrics are off: nothing is counted.
//
// Ownership: the registry must outlive every user of the structs.
// Thread safety: the pointees are atomic; the structs are read-only after
// Register().
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_METRICS_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_METRICS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "common/metrics/registry.h"

namespace fencegate::lockservice {

struct LockManagerMetrics {
  enum GrantKind { kImmediate, kWaited, kReentrant };
  enum NotGranted { kHeld, kLockDelay, kWaitTimeout };
  enum LeaseLostOp { kRenew, kRelease };

  // fencegate_lock_grants_total{kind}: immediate (granted on arrival),
  // waited (granted from the queue), reentrant (the holder again).
  std::array<metrics::Counter*, 3> grants{};
  // fencegate_lock_not_granted_total{reason}: a try-lock refused because
  // the resource is held (or others queue first) or in lock-delay; a
  // waiter whose wait ran out.
  std::array<metrics::Counter*, 3> not_granted{};
  metrics::Counter* releases = nullptr;     // leases ended by their holder
  metrics::Counter* expirations = nullptr;  // leases ended by their TTL
  metrics::Counter* renewals = nullptr;     // renewals accepted
  // fencegate_lock_lease_lost_total{op}: renew/release with a token that
  // no longer holds the lease.
  std::array<metrics::Counter*, 2> lease_lost{};
  metrics::Histogram* wait_seconds = nullptr;       // park to grant
  metrics::Histogram* commit_batch_size = nullptr;  // replies per commit
  metrics::Histogram* commit_seconds = nullptr;     // LockStore::Commit
  metrics::Counter* commit_failures = nullptr;

  static LockManagerMetrics Register(metrics::Registry& registry);
};

// Bump a metric that may be absent (null: metrics are off).
inline void Count(metrics::Counter* counter) {
  if (counter != nullptr) counter->Increment();
}
inline void Observe(metrics::Histogram* histogram, double value) {
  if (histogram != nullptr) histogram->Observe(value);
}

// Leadership of a replicated lock service (etcd store).
struct LeadershipMetrics {
  enum TermEnd { kStopped, kSessionLost, kSteppedDown };

  metrics::Gauge* leader = nullptr;           // 1 while this instance leads
  metrics::Gauge* term = nullptr;             // its term (create revision), 0 if none
  metrics::Counter* terms_started = nullptr;  // terms this instance won
  std::array<metrics::Counter*, 3> terms_ended{};  // by TermEnd
  metrics::Counter* leader_changes = nullptr;      // leaders seen (itself or another)

  static LeadershipMetrics Register(metrics::Registry& registry);
};

// What the current manager holds, read at each scrape.
struct LockStateFigures {
  uint64_t leases_held = 0;
  uint64_t waiters = 0;    // queued Acquires, parked or awaiting their retry
  uint64_t resources = 0;  // tracked: held, waited on or in lock-delay
  uint64_t last_token = 0;
};

// Adds fencegate_lock_leases_held, _waiters, _resources and _last_token,
// read through `read` (nullopt: no manager serves here now, e.g. a standby;
// the families then have no sample).
void AddLockStateGauges(metrics::Registry& registry,
                        std::function<std::optional<LockStateFigures>()> read);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_METRICS_H_
