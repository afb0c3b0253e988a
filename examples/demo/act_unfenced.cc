// Act 3: the GC pause again, without fencing: the control (acts.h).
#include "absl/strings/str_cat.h"
#include "examples/demo/acts.h"

namespace fencegate::demo {

namespace {

// After the paused holder's opening: client 2 increments, client 1 wakes
// and writes over it, unchecked.
absl::Status PlayUnfenced(Act& act, ActResult& result) {
  DEMO_ASSIGN_OR_RETURN(paused, FreezeHolderPastExpiry(act));
  if (!paused.handed_over) return absl::OkStatus();
  DEMO_ASSIGN_OR_RETURN(read2, act.Read(*paused.c2, Lane::kClient2));
  DEMO_ASSIGN_OR_RETURN(write2, act.Write(*paused.c2, Lane::kClient2));
  act.Expect(read2.ok() && write2.ok(), "client 2's increment is accepted");
  DEMO_ASSIGN_OR_RETURN(release2, act.Release(*paused.c2, Lane::kClient2));
  act.Expect(release2.ok(), "client 2 releases the lock");

  DEMO_RETURN_IF_ERROR(act.Thaw(*paused.c1, Lane::kClient1));
  act.timeline().Say("client 1 carries on with its increment, as in act 1");
  DEMO_ASSIGN_OR_RETURN(late_write,
                        act.Write(*paused.c1, Lane::kClient1, /*stale=*/true));
  act.Expect(late_write.ok(), "with no fence, client 1's stale write goes through");
  DEMO_ASSIGN_OR_RETURN(check_after, act.Check(*paused.c1, Lane::kClient1));
  act.Expect(check_after.status() == "lost",
             "client 1's Lease reports itself lost, too late to help");

  DEMO_ASSIGN_OR_RETURN(final_value, act.FinalCounter());
  act.timeline().Note(Lane::kPlainStore, CounterSummary(final_value, act.acknowledged()),
                      absl::StrCat("counter = ", final_value, ": an update is LOST"),
                      Outcome::kDamage);
  act.Expect(act.acknowledged() == 2 && final_value == 1,
             "without the fence, two increments are acknowledged but the counter says 1");
  // Said as it happened, so a failed run does not read like a good one.
  result.summary = absl::StrCat("client 1's stale write (token ", paused.t1, ") was ",
                                Verdict(late_write), "; ",
                                CounterSummary(final_value, act.acknowledged()));
  return absl::OkStatus();
}

}  // namespace

const ActScript kUnfencedAct = {
    "Act 3: GC pause, without fencing (the control)", "no-fence", Storage::kPlainFile,
    "Act 1 again, but the counter lives in a plain SQLite file that the clients write "
    "directly, with no token check. The lock alone cannot stop client 1.",
    PlayUnfenced};

}  // namespace fencegate::demo
