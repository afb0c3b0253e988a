// Act 3: the GC pause again, without fencing: the control (acts.h).
#include "absl/strings/str_cat.h"
#include "examples/demo/acts.h"

namespace fencegate::demo {

absl::StatusOr<ActResult> RunUnfencedAct(const DemoSetup& setup) {
  ActResult result;
  result.title = "Act 3: GC pause, without fencing (the control)";
  Act act(setup, "no-fence", Storage::kPlainFile, &result);
  act.timeline().BeginSection(
      result.title,
      "Act 1 again, but the counter lives in a plain SQLite file that the clients write "
      "directly, with no token check. The lock alone cannot stop client 1.");
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
  DEMO_ASSIGN_OR_RETURN(read2, act.Read(*c2, Lane::kClient2));
  DEMO_ASSIGN_OR_RETURN(write2, act.Write(*c2, Lane::kClient2));
  act.Expect(read2.ok() && write2.ok(), "client 2's increment is accepted");
  DEMO_ASSIGN_OR_RETURN(release2, act.Release(*c2, Lane::kClient2));
  act.Expect(release2.ok(), "client 2 releases the lock");

  DEMO_RETURN_IF_ERROR(act.Thaw(*c1, Lane::kClient1));
  act.timeline().Say("client 1 carries on with its increment, as in act 1");
  DEMO_ASSIGN_OR_RETURN(late_write, act.Write(*c1, Lane::kClient1, /*stale=*/true));
  act.Expect(late_write.ok(), "with no fence, client 1's stale write goes through");
  DEMO_ASSIGN_OR_RETURN(check_after, act.Check(*c1, Lane::kClient1));
  act.Expect(check_after.status() == "lost",
             "client 1's Lease reports itself lost, too late to help");

  DEMO_ASSIGN_OR_RETURN(final_value, act.FinalCounter());
  act.timeline().Note(Lane::kPlainStore, CounterSummary(final_value, act.acknowledged()),
                      absl::StrCat("counter = ", final_value, ": an update is LOST"),
                      Outcome::kDamage);
  act.Expect(act.acknowledged() == 2 && final_value == 1,
             "without the fence, two increments are acknowledged but the counter says 1");
  // Said as it happened, so a failed run does not read like a good one.
  result.summary =
      absl::StrCat("client 1's stale write (token ", t1, ") was ", Verdict(late_write),
                   "; ", CounterSummary(final_value, act.acknowledged()));
  return result;
}

}  // namespace fencegate::demo
