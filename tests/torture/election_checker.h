// The checker's election invariants (history_checker.h runs them), over
// the Campaigns (AcquireOp::campaign), Proclaims and the changes the
// observers were told (history.h):
//
//   election-changes-in-order     each observer is told an election's
//                                 changes in strictly increasing (term,
//                                 seq) order, across its streams' ends and
//                                 resumptions; and every observer told of
//                                 one (term, seq) was told the same leader,
//                                 candidate and value (they see one
//                                 history);
//   election-values-from-their-term
//                                 every value an observer is told a term
//                                 says was said in that term by its
//                                 leader: seq 0 is the value of the
//                                 candidate's Campaign (granted that term,
//                                 when its answer came back: a retried
//                                 Campaign may be refused after a grant
//                                 it never heard of); a later seq is the
//                                 value of a Proclaim made with that term
//                                 and not refused (the workers proclaim
//                                 in one attempt each); and an
//                                 acknowledged Proclaim's (term, seq) shows
//                                 its own value to whoever is told of it.
//                                 So a deposed leader's late Proclaim,
//                                 refused or not, never speaks for its
//                                 successor's term.
//
// No two leaders hold overlapping terms: a term is an exclusive lease, so
// leases-do-not-overlap (history_checker.h) covers it on the service's
// lease history, and tokens-unique its uniqueness.
//
// Thread safety: a pure function.
#ifndef FENCEGATE_TESTS_TORTURE_ELECTION_CHECKER_H_
#define FENCEGATE_TESTS_TORTURE_ELECTION_CHECKER_H_

#include "tests/torture/history.h"
#include "tests/torture/history_checker.h"

namespace fencegate::torture {

inline constexpr char kElectionChangesInOrder[] = "election-changes-in-order";
inline constexpr char kElectionValuesFromTheirTerm[] = "election-values-from-their-term";

// Adds every violation (a few per invariant and election) to
// result->violations, and the election counts to result->stats.
void CheckElections(const History& history, CheckResult* result);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_ELECTION_CHECKER_H_
