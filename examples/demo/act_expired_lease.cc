// Act 2: an expired lease, with fencing (acts.h).
#include "absl/strings/str_cat.h"
#include "examples/demo/acts.h"
#include "harness/tcp_proxy.h"

namespace fencegate::demo {

namespace {

absl::Status PlayExpiredLease(Act& act, ActResult& result) {
  const DemoSetup& setup = act.setup();
  // Client 1 reaches the lock service through a link the demo can cut.
  DEMO_ASSIGN_OR_RETURN(link, testing::TcpProxy::Start(setup.lockservice_port));
  DEMO_ASSIGN_OR_RETURN(c1, act.StartClient(Lane::kClient1, link->address()));
  DEMO_ASSIGN_OR_RETURN(c2, act.StartClient(Lane::kClient2));

  DEMO_ASSIGN_OR_RETURN(grant1, act.Acquire(*c1, Lane::kClient1));
  if (!act.Expect(grant1.ok(), "client 1 acquires the free lock"))
    return absl::OkStatus();
  const uint64_t t1 = grant1.GetUint("token");
  DEMO_ASSIGN_OR_RETURN(read1, act.Read(*c1, Lane::kClient1));
  act.Expect(read1.ok(), "client 1 reads the counter");

  link->Cut();
  act.timeline().Note(
      Lane::kClient1, "network partition: client 1 can no longer reach the lock service",
      "partition: cut off from the lock service", Outcome::kNote, Span::kCutOffBegin);
  DEMO_RETURN_IF_ERROR(
      c1->WaitForEvent("lease_lost", setup.ttl * 3 + absl::Seconds(10)).status());
  DEMO_RETURN_IF_ERROR(act.WaitForExpiry(t1));

  DEMO_ASSIGN_OR_RETURN(grant2, act.Acquire(*c2, Lane::kClient2));
  if (!act.Expect(grant2.ok(), "client 2 acquires the lock after the expiry")) {
    return absl::OkStatus();
  }
  const uint64_t t2 = grant2.GetUint("token");
  DEMO_ASSIGN_OR_RETURN(read2, act.Read(*c2, Lane::kClient2));
  DEMO_ASSIGN_OR_RETURN(write2, act.Write(*c2, Lane::kClient2));
  act.Expect(read2.ok() && write2.ok(), "client 2's increment is accepted");

  act.timeline().Say(
      "client 1 still sends its write (one already on its way, or from code that "
      "ignored the lost lease)");
  DEMO_ASSIGN_OR_RETURN(late_write, act.Write(*c1, Lane::kClient1));
  act.Expect(late_write.status() == "stale", "client 1's late write is refused as stale");

  link->Heal();
  act.timeline().Note(Lane::kClient1, "the partition heals", "partition heals",
                      Outcome::kNote, Span::kCutOffEnd);
  Message reconnect;
  reconnect.word = "reconnect";
  reconnect.Set("timeout_ms", 10000);
  DEMO_ASSIGN_OR_RETURN(up, c1->Call(reconnect));
  if (!up.ok())
    return absl::UnavailableError("client 1 could not reconnect after the heal");
  DEMO_ASSIGN_OR_RETURN(late_renew, act.Renew(*c1, Lane::kClient1));
  act.Expect(late_renew.status() == "lease_lost", "client 1's late renew is refused");
  DEMO_ASSIGN_OR_RETURN(late_release, act.Release(*c1, Lane::kClient1));
  act.Expect(late_release.status() == "lease_lost", "client 1's late release is refused");

  absl::StatusOr<client::LockState> state = setup.lock->Describe(act.resource());
  if (!state.ok()) return state.status();
  const bool untouched = state->held && state->token == t2;
  act.timeline().Note(Lane::kLockService,
                      untouched
                          ? absl::StrCat("still held by '", state->holder,
                                         "' with token ", t2,
                                         ": the late release freed nothing")
                          : absl::StrCat("held: ", state->held, ", token ", state->token),
                      absl::StrCat("still held by token ", state->token),
                      untouched ? Outcome::kOk : Outcome::kDamage);
  act.Expect(untouched, "client 2 still holds the lock after client 1's late calls");
  DEMO_ASSIGN_OR_RETURN(release2, act.Release(*c2, Lane::kClient2));
  act.Expect(release2.ok(), "client 2 releases the lock");

  DEMO_ASSIGN_OR_RETURN(final_value, act.FinalCounter());
  act.Expect(act.acknowledged() == 1 && final_value == 1,
             "only client 2's increment was acknowledged, and the counter counts it");
  // Said as it happened, so a failed run does not read like a good one.
  result.summary = absl::StrCat(
      "client 1's late calls (token ", t1, "): write ", Verdict(late_write), ", renew ",
      Verdict(late_renew), ", release ", Verdict(late_release), "; ",
      untouched ? absl::StrCat("client 2 still holds the lock (token ", t2, ")")
                : absl::StrCat("the lock is held by token ", state->token),
      "; ", CounterSummary(final_value, act.acknowledged()));
  return absl::OkStatus();
}

}  // namespace

const ActScript kExpiredLeaseAct = {
    "Act 2: expired lease, with fencing", "expired-lease", Storage::kGateway,
    "Client 1 is cut off from the lock service (a network partition): its renewals "
    "fail and its lease expires. Client 2 takes over. Client 1's late calls follow.",
    PlayExpiredLease};

}  // namespace fencegate::demo
