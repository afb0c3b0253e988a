// The demo's four acts, each an ActScript that PlayAct (act_support.h)
// plays. Each runs real client processes against the real servers of
// `setup`, records every step on setup.timeline, and returns whether it
// came out as expected (ActResult::failures lists what did not).
// An error status means the act could not be played (a process died, a
// server was unreachable, a deadline passed, or the demo was interrupted).
//
//   Act 1, GC pause: client 1 is frozen (SIGSTOP) mid read-modify-write
//   past its lease; client 2 takes over and writes; client 1 resumes and
//   writes with its old token: refused by the gateway, and its Lease says
//   it is lost. It then redoes its increment under a new lease: nothing lost.
//
//   Act 2, expired lease: client 1 is cut off from the lock service (a
//   TcpProxy partition), its renewals fail and its lease expires; client 2
//   takes over and writes; client 1's late write, renew and release are all
//   refused, and client 2 still holds the lock.
//
//   Act 3, no fencing: act 1's schedule with the counter in a plain SQLite
//   file that checks no token: client 1's stale write overwrites client 2's
//   and an acknowledged increment is lost. This control shows that acts 1
//   and 2 come out right because of the fence, not because of the timing.
//
//   Act 4, your own table: act 1's schedule with the counter in a table of
//   the clients' own on PostgreSQL (demo_counters), every read and write a
//   transaction fenced with fencegate_fence (the SQL fencing API,
//   docs/sql-fencing.md): client 1's late write is refused there too. It
//   needs setup.postgres; the demo skips it, saying why, without one.
#ifndef FENCEGATE_EXAMPLES_DEMO_ACTS_H_
#define FENCEGATE_EXAMPLES_DEMO_ACTS_H_

#include "absl/status/statusor.h"
#include "examples/demo/act_support.h"

namespace fencegate::demo {

extern const ActScript kGcPauseAct;       // act 1
extern const ActScript kExpiredLeaseAct;  // act 2
extern const ActScript kUnfencedAct;      // act 3
extern const ActScript kSqlTableAct;      // act 4

}  // namespace fencegate::demo

#endif  // FENCEGATE_EXAMPLES_DEMO_ACTS_H_
