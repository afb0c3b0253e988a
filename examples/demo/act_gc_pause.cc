// Act 1: a GC pause, with fencing; and act 4, the same behind a fence in
// SQL on a table of the user's own (acts.h).
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "examples/demo/acts.h"

namespace fencegate::demo {
namespace {

// The GC pause with the counter in `storage` (the gateway, or a SQL table).
absl::StatusOr<ActResult> PlayGcPause(const DemoSetup& setup, Storage storage,
                                      std::string title, const char* resource,
                                      const char* intro) {
  ActResult result;
  result.title = std::move(title);
  Act act(setup, resource, storage, &result);
  act.timeline().BeginSection(result.title, intro);
  DEMO_ASSIGN_OR_RETURN(c1, act.StartClient(Lane::kClient1));
  DEMO_ASSIGN_OR_RETURN(c2, act.StartClient(Lane::kClient2));

  DEMO_ASSIGN_OR_RETURN(grant1, act.Acquire(*c1, Lane::kClient1));
  if (!act.Expect(grant1.ok(), "client 1 acquires the free lock")) return result;
  const uint64_t t1 = grant1.GetUint("token");
  DEMO_ASSIGN_OR_RETURN(check1, act.Check(*c1, Lane::kClient1));
  act.Expect(check1.ok(), "client 1's lease is valid before the pause");
  DEMO_ASSIGN_OR_RETURN(read1, act.Read(*c1, Lane::kClient1));
  act.Expect(read1.ok(), "client 1 reads the counter");

  DEMO_RETURN_IF_ERROR(act.Freeze(*c1, Lane::kClient1));
  DEMO_RETURN_IF_ERROR(act.WaitForExpiry(t1));

  DEMO_ASSIGN_OR_RETURN(grant2, act.Acquire(*c2, Lane::kClient2));
  if (!act.Expect(grant2.ok(), "client 2 acquires the lock after the expiry")) {
    return result;
  }
  const uint64_t t2 = grant2.GetUint("token");
  act.Expect(t2 > t1, "client 2's token is larger than client 1's");
  DEMO_ASSIGN_OR_RETURN(read2, act.Read(*c2, Lane::kClient2));
  act.Expect(read2.ok(), "client 2 reads the counter");
  DEMO_ASSIGN_OR_RETURN(write2, act.Write(*c2, Lane::kClient2));
  act.Expect(write2.ok(), "client 2's write is accepted");
  DEMO_ASSIGN_OR_RETURN(release2, act.Release(*c2, Lane::kClient2));
  act.Expect(release2.ok(), "client 2 releases the lock");

  DEMO_RETURN_IF_ERROR(act.Thaw(*c1, Lane::kClient1));
  act.timeline().Say(
      "client 1 carries on where it stopped: it checked its lease before the pause, "
      "so it goes on to write");
  DEMO_ASSIGN_OR_RETURN(late_write, act.Write(*c1, Lane::kClient1));
  act.Expect(late_write.status() == "stale",
             "client 1's write with its old token is refused as stale");
  act.Expect(late_write.GetUint("max_token") == t2,
             "the refusal names client 2's token as the fence");
  DEMO_ASSIGN_OR_RETURN(check_after, act.Check(*c1, Lane::kClient1));
  act.Expect(check_after.status() == "lost", "client 1's Lease reports itself lost");

  if (late_write.status() == "stale") {
    act.timeline().Say(
        "client 1 does what the refusal says: take the lock again and redo the "
        "read-modify-write");
    DEMO_ASSIGN_OR_RETURN(grant3, act.Acquire(*c1, Lane::kClient1));
    if (!act.Expect(grant3.ok(), "client 1 acquires the lock again")) return result;
    DEMO_ASSIGN_OR_RETURN(read3, act.Read(*c1, Lane::kClient1));
    DEMO_ASSIGN_OR_RETURN(write3, act.Write(*c1, Lane::kClient1));
    act.Expect(read3.ok() && write3.ok(), "client 1's redone increment is accepted");
    DEMO_ASSIGN_OR_RETURN(release3, act.Release(*c1, Lane::kClient1));
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
      absl::StrCat("client 1's late write (token ", t1, ") was ", Verdict(late_write),
                   " (fence at ", late_write.GetUint("max_token"), "); ",
                   CounterSummary(final_value, act.acknowledged()));
  return result;
}

}  // namespace

absl::StatusOr<ActResult> RunGcPauseAct(const DemoSetup& setup) {
  return PlayGcPause(
      setup, Storage::kGateway, "Act 1: GC pause, with fencing", "gc-pause",
      "Client 1 is frozen (SIGSTOP) in the middle of incrementing a counter; its "
      "lease expires, client 2 takes over, then client 1 wakes up and writes.");
}

absl::StatusOr<ActResult> RunSqlTableAct(const DemoSetup& setup) {
  return PlayGcPause(
      setup, Storage::kSqlTable, "Act 4: GC pause, fenced in your own PostgreSQL table",
      "sql-table",
      "Act 1 again, with the counter in a table of the clients' own on PostgreSQL "
      "(no gateway): every read and write is a transaction whose first statement is "
      "fencegate_fence(resource, token).");
}

}  // namespace fencegate::demo
