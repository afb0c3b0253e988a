// Kleppmann's scenario end to end (../shared/DESIGN.md): two real client
// processes share a counter behind the real gateway, and client 1 is paused
// (SIGSTOP) or cut off (a TCP proxy between it and the lock service) until
// its lease expires. The control test runs the same schedule without the
// fence and asserts that an update IS lost, so the fenced tests show the
// fence at work, not a lucky schedule.
#include <signal.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/counter_store.h"
#include "fencegate/client/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"
#include "harness/tcp_proxy.h"

namespace fencegate::e2e {
namespace {

using demo::Message;
using ::testing::StartsWith;

// The text a demo client stores for an increment (counter_store.h).
std::string Written(int value, const std::string& who, uint64_t token) {
  return absl::StrCat(value, " (by ", who, ", token ", token, ")");
}

class FencingScenarioTest : public E2eTest {
 protected:
  // The counter as the gateway holds it, read by the test itself.
  std::string StoredText(const std::string& resource) {
    absl::StatusOr<client::ReadResult> read =
        gateway_client_->ReadUnfenced(resource, "counter");
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? read->value : "";
  }
};

TEST_F(FencingScenarioTest, GcPausedHolderIsRefusedAfterANewerHolderWrote) {
  const std::string r = "gc-pause";
  ASSERT_OK_AND_ASSIGN(PausedHolder paused, PauseHolderUntilSuperseded(r));
  demo::ClientProcess* c1 = paused.client1.get();
  const uint64_t t2 = paused.token2;
  EXPECT_GT(t2, paused.token1);

  ASSERT_OK_AND_ASSIGN(Message late, Call(*c1, "write"));
  EXPECT_EQ(late.status(), "stale") << demo::FormatMessage(late);
  EXPECT_EQ(late.GetUint("max_token"), t2);

  // Client 1 learns its lease is lost: Check() and the on_lost callback.
  ASSERT_OK_AND_ASSIGN(Message check2, Call(*c1, "check"));
  EXPECT_EQ(check2.status(), "lost");
  EXPECT_THAT(c1->WaitForEvent("lease_lost", absl::Seconds(10)), testing::IsOk());

  // What the gateway holds, seen by the test: client 2's write, intact.
  EXPECT_EQ(StoredText(r), Written(1, "client 2", t2));
  ASSERT_OK_AND_ASSIGN(client::ResourceSummary fence, gateway_client_->Describe(r));
  EXPECT_EQ(fence.max_token, t2);
}

TEST_F(FencingScenarioTest, ExpiredLeaseLateWriteRenewAndReleaseAreRefused) {
  const std::string r = "expired-lease";
  // Client 1 reaches the lock service only through a link the test cuts.
  ASSERT_OK_AND_ASSIGN(auto link, testing::TcpProxy::Start(lockservice_->port()));
  ASSERT_OK_AND_ASSIGN(auto c1, StartClient("client 1", r, false, link->address()));
  ASSERT_OK_AND_ASSIGN(auto c2, StartClient("client 2", r));

  ASSERT_OK_AND_ASSIGN(Message grant1, Acquire(*c1));
  const uint64_t t1 = grant1.GetUint("token");
  ASSERT_OK_AND_ASSIGN(Message read1, Call(*c1, "read"));
  ASSERT_TRUE(read1.ok());

  link->Cut();
  // Its renewals fail; its Lease gives up on its own, and the server expires it.
  ASSERT_OK_AND_ASSIGN(Message lost,
                       c1->WaitForEvent("lease_lost", kTtl + absl::Seconds(10)));
  EXPECT_THAT(lost.Get("msg"), ::testing::HasSubstr("lapsed"));
  ASSERT_THAT(WaitUntilLeaseGone(r, t1), testing::IsOk());

  ASSERT_OK_AND_ASSIGN(Message grant2, Acquire(*c2));
  const uint64_t t2 = grant2.GetUint("token");
  ASSERT_OK_AND_ASSIGN(Message read2, Call(*c2, "read"));
  ASSERT_TRUE(read2.ok());
  ASSERT_OK_AND_ASSIGN(Message write2, Call(*c2, "write"));
  ASSERT_TRUE(write2.ok());

  ASSERT_OK_AND_ASSIGN(Message late_write, Call(*c1, "write"));
  EXPECT_EQ(late_write.status(), "stale") << demo::FormatMessage(late_write);
  EXPECT_EQ(late_write.GetUint("max_token"), t2);

  link->Heal();
  Message reconnect;
  reconnect.word = "reconnect";
  reconnect.Set("timeout_ms", 10000);
  ASSERT_OK_AND_ASSIGN(Message up, c1->Call(reconnect));
  ASSERT_TRUE(up.ok()) << demo::FormatMessage(up);
  ASSERT_OK_AND_ASSIGN(Message late_renew, Call(*c1, "renew"));
  EXPECT_EQ(late_renew.status(), "lease_lost") << demo::FormatMessage(late_renew);
  EXPECT_EQ(late_renew.GetUint("holder_token"), t2);
  ASSERT_OK_AND_ASSIGN(Message late_release, Call(*c1, "release"));
  EXPECT_EQ(late_release.status(), "lease_lost") << demo::FormatMessage(late_release);

  // Client 2's lock and data are untouched.
  ASSERT_OK_AND_ASSIGN(client::LockState state, lock_->Describe(r));
  EXPECT_TRUE(state.held);
  EXPECT_EQ(state.token, t2);
  EXPECT_EQ(state.holder, "client 2");
  ASSERT_OK_AND_ASSIGN(Message check2, Call(*c2, "check"));
  EXPECT_TRUE(check2.ok()) << "client 2's lease suffered: "
                           << demo::FormatMessage(check2);
  EXPECT_EQ(StoredText(r), Written(1, "client 2", t2));
}

// The control: act 1's schedule, the counter in a plain SQLite file that
// both clients write directly. The stale write must get through here.
TEST_F(FencingScenarioTest, WithoutTheFenceTheSameScheduleLosesAnUpdate) {
  const std::string r = "no-fence";
  ASSERT_OK_AND_ASSIGN(auto c1, StartClient("client 1", r, /*plain=*/true));
  ASSERT_OK_AND_ASSIGN(auto c2, StartClient("client 2", r, /*plain=*/true));

  ASSERT_OK_AND_ASSIGN(Message grant1, Acquire(*c1));
  const uint64_t t1 = grant1.GetUint("token");
  ASSERT_OK_AND_ASSIGN(Message read1, Call(*c1, "read"));
  ASSERT_TRUE(read1.ok());
  ASSERT_THAT(c1->Freeze(), testing::IsOk());
  ASSERT_THAT(WaitUntilLeaseGone(r, t1), testing::IsOk());

  ASSERT_OK_AND_ASSIGN(Message grant2, Acquire(*c2));
  const uint64_t t2 = grant2.GetUint("token");
  ASSERT_OK_AND_ASSIGN(Message read2, Call(*c2, "read"));
  ASSERT_OK_AND_ASSIGN(Message write2, Call(*c2, "write"));
  ASSERT_TRUE(read2.ok() && write2.ok());

  ASSERT_THAT(c1->Thaw(), testing::IsOk());
  ASSERT_OK_AND_ASSIGN(Message late, Call(*c1, "write"));
  EXPECT_TRUE(late.ok()) << "with no fence the stale write should go through: "
                         << demo::FormatMessage(late);
  ASSERT_OK_AND_ASSIGN(Message check, Call(*c1, "check"));
  EXPECT_EQ(check.status(), "lost") << "the lease was lost all along";

  // Two increments acknowledged, the counter says 1: client 2's is lost.
  ASSERT_OK_AND_ASSIGN(auto store,
                       demo::NewPlainCounterStore(dir_.File("plain.db"), "counter"));
  ASSERT_OK_AND_ASSIGN(demo::CounterValue stored, store->Read(client::Fencing{r, 0, {}}));
  EXPECT_EQ(stored.value, 1);
  EXPECT_EQ(stored.text, Written(1, "client 1", t1)) << "client 2's was " << t2;
}

}  // namespace
}  // namespace fencegate::e2e
