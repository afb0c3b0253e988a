// LeaseIntervals: the leases the lock service held, as intervals on its own
// monotonic clock, rebuilt from its lease history (history.h, LeaseEvent).
//
// A grant opens an interval; a release or expiry closes it. A load (a start
// or a recovery of the lock service) puts every open lease on hold: a
// restore that follows continues it (the interval spans the restart); one
// that is not restored ends at the load, unless a holder had been told it
// holds it (`acknowledged`): such a lease must survive a restart and be held
// a full TTL after it, so the interval is taken to end at load + TTL and is
// marked `forgotten`. A restore of a lease with no open interval (one whose
// release was never committed) opens a new one at the restore.
//
// An acknowledgement belongs to the lease it came from: the latest interval
// of that resource and token that began before the Acquire returned (after
// a crash an uncommitted token may be granted again, to someone else).
//
// Several instances (a replicated lock service, events merged by time):
// the instance of the latest load owns the lease table (it leads; a load
// is each of its terms' start, or a restart). Another instance's events
// from then on are a deposed leader's, which its term guard keeps from
// ever committing: its releases, expiries and restores change nothing, and
// its grants count only if a client was told it holds one. Such an
// acknowledged grant is a lease the service must honour for its TTL, which
// the owner knows nothing of: an interval [grant, grant + TTL], marked
// `deposed`.
//
// Thread safety: a pure function.
#ifndef FENCEGATE_TESTS_TORTURE_LEASE_INTERVALS_H_
#define FENCEGATE_TESTS_TORTURE_LEASE_INTERVALS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/torture/history.h"

namespace fencegate::torture {

struct LeaseInterval {
  std::string resource;
  uint64_t token = 0;
  LeaseMode mode = LeaseMode::kExclusive;
  std::string holder;
  int64_t start_ns = 0;
  int64_t end_ns = kNever;  // kNever: still held when the history ends
  bool forgotten = false;   // acknowledged, then not restored by a restart
  int64_t ttl_ms = 0;
  int64_t dropped_at_ns = 0;  // the load that did not restore it (0: none)
  std::string instance;       // that granted (or restored) it
  bool granted = false;       // began with a grant (not a restore)
  bool acknowledged = false;  // a client was told it holds it
  bool deposed = false;       // granted by an instance that no longer led
};

// Every successful Acquire in `acquires` acknowledges a lease.
std::vector<LeaseInterval> BuildLeaseIntervals(const std::vector<LeaseEvent>& events,
                                               const std::vector<AcquireOp>& acquires);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_LEASE_INTERVALS_H_
