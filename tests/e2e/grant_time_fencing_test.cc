// Grant-time fencing with the real binaries: the gateway follows the lock
// service (--lockservice) and raises a resource's fence as soon as a newer
// lease is granted, or as soon as a lease expires, so an expired holder is
// refused even before anyone else has touched the gateway. The stream may
// break (a cut link, a lock service killed with -9): the gateway catches up
// and misses nothing, and no fence ever goes down.
//
// Leases here are taken with LockClient::Acquire, which does not renew: the
// holder "stops renewing" as a partitioned or paused one would.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "harness/server_process.h"
#include "harness/tcp_proxy.h"
#include "harness/temp_dir.h"
#include "tests/e2e/own_servers_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::fencegate::testing::IsOk;

constexpr absl::Duration kShortTtl = absl::Milliseconds(500);
constexpr absl::Duration kGrantPatience = absl::Seconds(30);

class GrantTimeFencingTest : public OwnServersTest {
 protected:
  // Following the lock service at `follow` (itself, or a proxy before it).
  void StartGateway(const std::string& follow) {
    OwnServersTest::StartGateway({"--lockservice=" + follow});
  }

  // Each call is a new holder (a reentrant acquire would keep the token).
  uint64_t MustAcquire(const std::string& resource, absl::Duration ttl = absl::Seconds(60)) {
    client::AcquireOptions options;
    options.ttl = ttl;
    options.wait = kGrantPatience;  // after an expiry, the resource frees itself
    absl::StatusOr<client::AcquireOutcome> outcome =
        lock_->Acquire(resource, absl::StrCat("holder-", ++holders_), options);
    EXPECT_TRUE(outcome.ok() && outcome->acquired) << outcome.status();
    return outcome.ok() ? outcome->token : 0;
  }

  // Waits until the gateway's fence on `resource` is above `token` (an
  // expiry mark) or at least `token` (a grant), without touching it.
  absl::Status WaitForFenceAbove(const std::string& resource, uint64_t token) {
    return testing::PollUntil([&] { return FenceOf(resource) > token; }, kGrantPatience,
                              absl::StrCat("the fence of ", resource, " above ", token));
  }
  absl::Status WaitForFenceAtLeast(const std::string& resource, uint64_t token) {
    return testing::PollUntil([&] { return FenceOf(resource) >= token; }, kGrantPatience,
                              absl::StrCat("the fence of ", resource, " at ", token));
  }
  absl::Status WaitUntilFree(const std::string& resource) {
    return testing::PollUntil(
        [&] {
          absl::StatusOr<client::LockState> state = lock_->Describe(resource);
          return state.ok() && !state->held;
        },
        kGrantPatience, absl::StrCat(resource, " to be free"));
  }

  // The late write of a holder whose lease is gone: must be refused as stale.
  void ExpectRefused(const std::string& resource, uint64_t token) {
    absl::StatusOr<client::WriteResult> late =
        gateway_client_->Put({resource, token, {}}, "k", "late");
    EXPECT_TRUE(client::IsStaleToken(late.status())) << late.status();
    EXPECT_GT(client::CurrentToken(late.status()), token);
  }

  int holders_ = 0;
};

TEST_F(GrantTimeFencingTest, ExpiredHolderIsRefusedWithNoSuccessorAtAll) {
  StartLockService();
  StartGateway(lockservice_->address());
  const uint64_t token = MustAcquire("r", kShortTtl);
  ASSERT_THAT(WaitUntilFree("r"), IsOk());
  // Nobody else acquired or wrote: the expiry alone raised the fence.
  ASSERT_THAT(WaitForFenceAbove("r", token), IsOk());
  ExpectRefused("r", token);
  // The next holder still passes.
  const uint64_t next = MustAcquire("r");
  EXPECT_GT(next, token);
  EXPECT_THAT(gateway_client_->Put({"r", next, {}}, "k", "next"), IsOk());
}

TEST_F(GrantTimeFencingTest, ExpiredHolderIsRefusedBeforeItsSuccessorWrites) {
  StartLockService();
  StartGateway(lockservice_->address());
  const uint64_t old_token = MustAcquire("r", kShortTtl);
  const uint64_t new_token = MustAcquire("r");  // waits out the old lease
  ASSERT_GT(new_token, old_token);
  // The successor has not touched the gateway; its grant did.
  ASSERT_THAT(WaitForFenceAtLeast("r", new_token), IsOk());
  ExpectRefused("r", old_token);
  EXPECT_THAT(gateway_client_->Put({"r", new_token, {}}, "k", "successor"), IsOk());
}

TEST_F(GrantTimeFencingTest, CutStreamCatchesUpWithEveryGrantAndExpiry) {
  StartLockService();
  ASSERT_OK_AND_ASSIGN(auto link, testing::TcpProxy::Start(lockservice_->port()));
  StartGateway(link->address());
  const uint64_t first = MustAcquire("before-cut");
  ASSERT_THAT(WaitForFenceAtLeast("before-cut", first), IsOk());

  link->Cut();
  std::vector<std::pair<std::string, uint64_t>> granted;
  for (int i = 0; i < 5; ++i) {
    const std::string resource = absl::StrCat("during-cut-", i);
    granted.emplace_back(resource, MustAcquire(resource));
  }
  const uint64_t expired = MustAcquire("expires-during-cut", kShortTtl);
  ASSERT_THAT(WaitUntilFree("expires-during-cut"), IsOk());
  // The cut is real: the gateway has heard of none of it.
  for (const auto& [resource, token] : granted) EXPECT_EQ(FenceOf(resource), 0u);

  link->Heal();
  for (const auto& [resource, token] : granted) {
    EXPECT_THAT(WaitForFenceAtLeast(resource, token), IsOk());
  }
  EXPECT_THAT(WaitForFenceAbove("expires-during-cut", expired), IsOk());
  ExpectRefused("expires-during-cut", expired);
  EXPECT_EQ(FenceOf("before-cut"), first);  // no fence went down
}

TEST_F(GrantTimeFencingTest, LockServiceKilledWhileFollowedIsCaughtUpAfterRestart) {
  StartLockService();
  const int port = lockservice_->port();
  StartGateway(lockservice_->address());
  const uint64_t held = MustAcquire("held-at-crash", absl::Seconds(2));
  ASSERT_THAT(WaitForFenceAtLeast("held-at-crash", held), IsOk());

  lockservice_->Kill();
  lockservice_.reset();
  StartLockService({}, port);  // same address, same database

  // After the restart: a new grant reaches the gateway through the new
  // stream, and the lease held at the crash (re-armed for its full TTL)
  // expires and fences its holder out.
  const uint64_t after = MustAcquire("after-restart");
  EXPECT_GT(after, held);
  EXPECT_THAT(WaitForFenceAtLeast("after-restart", after), IsOk());
  ASSERT_THAT(WaitUntilFree("held-at-crash"), IsOk());
  EXPECT_THAT(WaitForFenceAbove("held-at-crash", held), IsOk());
  ExpectRefused("held-at-crash", held);
}

}  // namespace
}  // namespace fencegate::e2e
