// CheckHistory: proves from a recorded History (history.h) that nothing
// unsafe happened in a torture run, or names what did. The invariants:
//
//   tokens-unique                 no token is acknowledged by two Acquires;
//   tokens-increase-in-real-time  if Acquire A returned before Acquire B was
//                                 sent, token(A) < token(B), across restarts;
//   fence-never-below-acknowledged-token
//                                 no gateway answer, accepted or refused,
//                                 reports a fence below a token the gateway
//                                 had acknowledged (or applied) on that
//                                 resource before the call was sent (an
//                                 exclusive token's: a shared one's read
//                                 moves no fence). So no
//                                 accepted write or fenced read carries a
//                                 token older than one already acknowledged,
//                                 and the fence never goes back, not even
//                                 over a crash (the final reads count too);
//   acknowledged-writes-survive   every acknowledged write is in the final
//                                 state, with the value it wrote;
//   no-lost-update                the final counter C lies between the
//                                 acknowledged increments and those plus
//                                 the unknown ones, and the log's values are
//                                 exactly 1..C, each once (two increments
//                                 that read the same value show up as a
//                                 value held twice);
//   append-log-exact              the log holds no id whose write was
//                                 refused and no id nobody wrote;
//   leases-do-not-overlap         on the lock service's own monotonic clock,
//                                 no exclusive lease on a resource is held
//                                 at once with any other lease on it
//                                 (shared leases, and permits, may overlap
//                                 each other), across restarts: a lease alive at a
//                                 crash continues if the restarted service
//                                 restores it; one it forgets ends at the
//                                 restart, unless it had been acknowledged
//                                 to its holder: then the contract (held a
//                                 full TTL after a restart) says it lasts
//                                 until restart + TTL. With several
//                                 instances (etcd), also across leaders: a
//                                 grant of a deposed leader that a client
//                                 was told of is a lease of its TTL that
//                                 no other instance may overlap
//                                 (lease_intervals.h);
//   permits-at-most-n             on that clock too, a semaphore of N
//                                 permits (N as its Acquires named it)
//                                 never has more than N held at once;
//   refused-acquire-holds-nothing when an Acquire is answered "not
//                                 acquired", no lease of its holder on that
//                                 resource is held: a multi-resource
//                                 Acquire is granted whole or not at all
//                                 (holders are fresh each round);
//   reads-see-no-overwritten-value
//                                 no accepted fenced read, with an
//                                 exclusive or a shared token, returns a
//                                 value older than one an acknowledged
//                                 write had stored before the read was
//                                 sent (a stale copy served);
//   shared-read-sees-no-newer-write
//                                 no accepted fenced read with a shared
//                                 token t returns a value that a write
//                                 with a token above t stored: that writer
//                                 came after the reader's lease, so a
//                                 reader paused past its lease is refused,
//                                 never served what a newer writer wrote
//                                 (the reads of one shared lease all see
//                                 one state);
//   tokens-increase-across-leaders
//                                 on the lock service's timeline, every
//                                 grant's token exceeds every acknowledged
//                                 grant made before it, by whichever
//                                 instance (a new leader continues from
//                                 every token its predecessors issued);
//   stale-write-through-another-gateway
//                                 no gateway accepts a write with a token
//                                 below one another gateway had
//                                 acknowledged on that resource before the
//                                 write was sent (a special case of the
//                                 fence invariant, named apart for
//                                 several gateways);
//   grant-time-fence-reaches-gateways
//                                 with grant-time fencing (a secure run),
//                                 once the gateways had time to catch up
//                                 with the fence feed after the run (before
//                                 the last crash), the fence of every
//                                 resource was at least every exclusive
//                                 token acknowledged for it: the feed
//                                 missed no grant (fence_feed_wait.h);
//   election-changes-in-order, election-values-from-their-term
//                                 the elections' (election_checker.h).
//
// Unknown outcomes are maybe-applied, never failures: an unknown write
// widens the counter's range, may or may not be in the log, and counts as
// applied (for the fence) only when the final state shows it was.
//
// Thread safety: a pure function.
#ifndef FENCEGATE_TESTS_TORTURE_HISTORY_CHECKER_H_
#define FENCEGATE_TESTS_TORTURE_HISTORY_CHECKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/torture/history.h"

namespace fencegate::torture {

inline constexpr char kTokensUnique[] = "tokens-unique";
inline constexpr char kTokensIncreaseInRealTime[] = "tokens-increase-in-real-time";
inline constexpr char kFenceNeverBelowAcknowledged[] =
    "fence-never-below-acknowledged-token";
inline constexpr char kAcknowledgedWritesSurvive[] = "acknowledged-writes-survive";
inline constexpr char kNoLostUpdate[] = "no-lost-update";
inline constexpr char kAppendLogExact[] = "append-log-exact";
inline constexpr char kLeasesDoNotOverlap[] = "leases-do-not-overlap";
inline constexpr char kPermitsAtMostN[] = "permits-at-most-n";
inline constexpr char kRefusedAcquireHoldsNothing[] = "refused-acquire-holds-nothing";
inline constexpr char kReadsSeeNoOverwrittenValue[] = "reads-see-no-overwritten-value";
inline constexpr char kSharedReadSeesNoNewerWrite[] = "shared-read-sees-no-newer-write";
inline constexpr char kTokensIncreaseAcrossLeaders[] = "tokens-increase-across-leaders";
inline constexpr char kStaleWriteThroughAnotherGateway[] =
    "stale-write-through-another-gateway";
inline constexpr char kGrantTimeFenceReachesGateways[] =
    "grant-time-fence-reaches-gateways";

struct Violation {
  std::string invariant;  // one of the names above
  std::string detail;     // what happened, with processes, tokens and times
};

struct CheckStats {
  int acquires_ok = 0;
  int acquires_refused = 0;
  int acquires_unknown = 0;
  int reads_ok = 0;
  int reads_refused = 0;
  int reads_unknown = 0;
  int shared_reads_ok = 0;  // of the reads, those with a shared lease's token
  int shared_reads_refused = 0;
  int writes_ok = 0;
  int writes_refused = 0;  // stale writes the gateway refused
  int writes_unknown = 0;
  int writes_unknown_applied = 0;  // unknown, and found in the final state
  // Of the writes, those made through SQL (gateway kSqlPath).
  int sql_writes_ok = 0;
  int sql_writes_refused = 0;
  int sql_writes_unknown = 0;
  int leases = 0;                  // lease intervals on the server's clock
  int deposed_leases = 0;          // ... granted by a deposed leader, acknowledged
  int shared_leases = 0;           // ... of them shared
  int permit_leases = 0;           // ... of them permits
  int lock_service_loads = 0;      // starts, recoveries and terms of the lock service
  int leaders = 0;                 // loads by another instance than the one before
  // Elections (election_checker.h):
  int terms = 0;  // acknowledged Campaigns
  int proclaims_ok = 0;
  int proclaims_refused = 0;
  int proclaims_unknown = 0;
  int changes_observed = 0;
};

struct CheckResult {
  std::vector<Violation> violations;
  CheckStats stats;
  bool ok() const { return violations.empty(); }
  // True iff some violation is of `invariant`.
  bool Violates(const std::string& invariant) const;
};

// Every violation of every invariant above (at most a few reported per
// invariant and resource, to keep reports readable).
CheckResult CheckHistory(const History& history);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_HISTORY_CHECKER_H_
