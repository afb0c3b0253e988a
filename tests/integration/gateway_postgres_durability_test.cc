// kill -9 of one of two fencegate-gateway processes on one PostgreSQL
// server, in the middle of a write load on both: every acknowledged write is
// there with its fence, nothing is half-applied, and the other gateway goes
// on (the killed one's open transaction and row locks die with its
// connection).
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_postgres_fixture.h"
#include "tests/integration/three_key_writers.h"

namespace fencegate {
namespace {

// Writers put three keys at a time (all or nothing) on one resource, with
// ever larger tokens from one counter: even ones through gateway A, odd
// ones through gateway B. Once enough writes are acknowledged, A gets
// SIGKILL with requests in flight; B's writers must then get further writes
// acknowledged (A's row locks are gone), and stop. Then A restarts: through
// either gateway, each writer's keys hold one request's data, at least as
// new as its last acknowledged one, and the fence covers every
// acknowledged token.
TEST_F(GatewaysOnPostgresTest, KillNineOfOneGatewayLosesNoAcknowledgedWrite) {
  StartGateway(0);
  StartGateway(1);
  constexpr int kWriters = 4;
  constexpr int kAcksBeforeKill = 150;
  constexpr int kAcksOnBAfterKill = 50;
  std::atomic<int> acks{0};
  std::atomic<int> acks_on_b_after_kill{0};
  std::atomic<bool> killed{false};
  absl::Notification enough_acks;
  absl::Notification b_went_on;
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < kWriters; ++i) stubs.push_back(StubOf(i % 2 == 0 ? 0 : 1));
  ThreeKeyLoad load("crash", std::move(stubs), [&](int writer) {
    const bool on_a = writer % 2 == 0;
    if (acks.fetch_add(1) + 1 == kAcksBeforeKill) enough_acks.Notify();
    if (!on_a && killed.load() &&
        acks_on_b_after_kill.fetch_add(1) + 1 == kAcksOnBAfterKill) {
      b_went_on.Notify();
    }
  });
  const bool reached = enough_acks.WaitForNotificationWithTimeout(absl::Seconds(120));
  killed = true;
  gateways_[0]->Kill();  // mid-load: requests are in flight
  const bool b_on = b_went_on.WaitForNotificationWithTimeout(absl::Seconds(120));
  load.Stop();
  ASSERT_TRUE(reached) << "only " << acks.load() << " writes acknowledged";
  EXPECT_TRUE(b_on) << "gateway B got only " << acks_on_b_after_kill.load()
                    << " writes acknowledged after A was killed";
  for (int i = 0; i < kWriters; ++i) {
    if (i % 2 == 0) {
      EXPECT_FALSE(load.error(i).empty()) << "writer " << i << " outlived gateway A";
    } else {
      EXPECT_EQ(load.error(i), "") << "writer " << i << " on gateway B";
    }
  }

  StartGateway(0);
  for (int reader = 0; reader < 2; ++reader) {
    SCOPED_TRACE(absl::StrCat("through gateway ", reader));
    load.ExpectSurvived(*StubOf(reader));
  }
}

}  // namespace
}  // namespace fencegate
