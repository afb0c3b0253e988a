// Act 1: a GC pause, with fencing; and act 4, the same behind a fence in
// SQL on a table of the user's own (acts.h).
#include "absl/strings/str_cat.h"
#include "examples/demo/acts.h"

namespace fencegate::demo {
namespace {

// The GC pause, after the paused holder's opening: client 2 increments,
// client 1 wakes and writes with its old token, is refused and redoes its
// increment.
absl::Status PlayGcPause(Act& act, ActResult& result) {
  DEMO_ASSIGN_OR_RETURN(paused, FreezeHolderPastExpiry(act));
  if (!paused.handed_over) return absl::OkStatus();
  act.Expect(paused.t2 > paused.t1, "client 2's token is larger than client 1's");
  DEMO_ASSIGN_OR_RETURN(read2, act.Read(*paused.c2, Lane::kClient2));
  act.Expect(read2.ok(), "client 2 reads the counter");
  DEMO_ASSIGN_OR_RETURN(write2, act.Write(*paused.c2, Lane::kClient2));
  act.Expect(write2.ok(), "client 2's write is accepted");
  DEMO_ASSIGN_OR_RETURN(release2, act.Release(*paused.c2, Lane::kClient2));
  act.Expect(release2.ok(), "client 2 releases the lock");

  DEMO_RETURN_IF_ERROR(act.Thaw(*paused.c1, Lane::kClient1));
  act.timeline().Say(
      "client 1 carries on where it stopped: it checked its lease before the pause, "
      "so it goes on to write");
  DEMO_ASSIGN_OR_RETURN(late_write, act.Write(*paused.c1, Lane::kClient1));
  act.Expect(late_write.status() == "stale",
             "client 1's write with its old token is refused as stale");
  act.Expect(late_write.GetUint("max_token") == paused.t2,
             "the refusal names client 2's token as the fence");
  DEMO_ASSIGN_OR_RETURN(check_after, act.Check(*paused.c1, Lane::kClient1));
  act.Expect(check_after.status() == "lost", "client 1's Lease reports itself lost");

  if (late_write.status() == "stale") {
    act.timeline().Say(
        "client 1 does what the refusal says: take the lock again and redo the "
        "read-modify-write");
    DEMO_ASSIGN_OR_RETURN(grant3, act.Acquire(*paused.c1, Lane::kClient1));
    if (!act.Expect(grant3.ok(), "client 1 acquires the lock again"))
      return absl::OkStatus();
    DEMO_ASSIGN_OR_RETURN(read3, act.Read(*paused.c1, Lane::kClient1));
    DEMO_ASSIGN_OR_RETURN(write3, act.Write(*paused.c1, Lane::kClient1));
    act.Expect(read3.ok() && write3.ok(), "client 1's redone increment is accepted");
    DEMO_ASSIGN_OR_RETURN(release3, act.Release(*paused.c1, Lane::kClient1));
    act.Expect(release3.ok(), "client 1 releases the lock");
  }

  DEMO_ASSIGN_OR_RETURN(final_value, act.FinalCounter());
  const bool none_lost = final_value == act.acknowledged();
  act.timeline().Note(act.StoreLane(), CounterSummary(final_value, act.acknowledged()),
                      absl::StrCat("counter = ", final_value,
                                   none_lost ? ": nothing lost" : ": LOST updates"),
                      none_lost ? Outcome::kOk : Outcome::kDamage);
  act.Expect(act.acknowledged() == 2 && none_lost,
             "two increments acknowledged, and the counter counts both");
  // Said as it happened, so a failed run does not read like a good one.
  result.summary =
      absl::StrCat("client 1's late write (token ", paused.t1, ") was ",
                   Verdict(late_write), " (fence at ", late_write.GetUint("max_token"),
                   "); ", CounterSummary(final_value, act.acknowledged()));
  return absl::OkStatus();
}

}  // namespace

const ActScript kGcPauseAct = {
    "Act 1: GC pause, with fencing", "gc-pause", Storage::kGateway,
    "Client 1 is frozen (SIGSTOP) in the middle of incrementing a counter; its "
    "lease expires, client 2 takes over, then client 1 wakes up and writes.",
    PlayGcPause};

const ActScript kSqlTableAct = {
    "Act 4: GC pause, fenced in your own PostgreSQL table", "sql-table",
    Storage::kSqlTable,
    "Act 1 again, with the counter in a table of the clients' own on PostgreSQL "
    "(no gateway): every read and write is a transaction whose first statement is "
    "fencegate_fence(resource, token).",
    PlayGcPause};

}  // namespace fencegate::demo
