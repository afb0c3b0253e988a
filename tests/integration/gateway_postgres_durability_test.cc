// kill -9 of one of two fencegate-gateway processes on one PostgreSQL
// server, in the middle of a write load on both: every acknowledged write is
// there with its fence, nothing is half-applied, and the other gateway goes
// on (the killed one's open transaction and row locks die with its
// connection).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_postgres_fixture.h"
#include "tests/integration/three_key_writers.h"
#include "tests/testing/status_matchers.h"

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
  std::vector<WriterProgress> progress(kWriters);
  std::vector<std::string> errors(kWriters);  // why each stopped, if not told to
  std::atomic<uint64_t> next_token{1};
  std::atomic<int> acks{0};
  std::atomic<int> acks_on_b_after_kill{0};
  std::atomic<bool> killed{false};
  std::atomic<bool> stop{false};
  absl::Notification enough_acks;
  absl::Notification b_went_on;
  // Every writer's connection is made before the load starts: one made by a
  // writer thread that starts late could find gateway A already killed.
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < kWriters; ++i) stubs.push_back(StubOf(i % 2 == 0 ? 0 : 1));
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      const bool on_a = i % 2 == 0;
      for (int64_t seq = 0; seq < 1000000 && !stop.load(); ++seq) {
        absl::StatusOr<bool> acked = WriteThreeKeys(*stubs[i], "crash", i, seq,
                                                    next_token.fetch_add(1), progress[i]);
        if (!acked.ok()) {
          errors[i] = acked.status().ToString();  // A is gone, or a failure
          return;
        }
        if (!*acked) continue;
        if (acks.fetch_add(1) + 1 == kAcksBeforeKill) enough_acks.Notify();
        if (!on_a && killed.load() &&
            acks_on_b_after_kill.fetch_add(1) + 1 == kAcksOnBAfterKill) {
          b_went_on.Notify();
        }
      }
    });
  }
  const bool reached = enough_acks.WaitForNotificationWithTimeout(absl::Seconds(120));
  killed = true;
  gateways_[0]->Kill();  // mid-load: requests are in flight
  const bool b_on = b_went_on.WaitForNotificationWithTimeout(absl::Seconds(120));
  stop = true;
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(reached) << "only " << acks.load() << " writes acknowledged";
  EXPECT_TRUE(b_on) << "gateway B got only " << acks_on_b_after_kill.load()
                    << " writes acknowledged after A was killed";
  for (int i = 0; i < kWriters; ++i) {
    if (i % 2 == 0) {
      EXPECT_FALSE(errors[i].empty()) << "writer " << i << " outlived gateway A";
    } else {
      EXPECT_EQ(errors[i], "") << "writer " << i << " on gateway B";
    }
  }

  StartGateway(0);
  std::unique_ptr<Stub> readers[2] = {StubOf(0), StubOf(1)};
  uint64_t max_acked_token = 0;
  for (int i = 0; i < kWriters; ++i) {
    SCOPED_TRACE(absl::StrCat("writer ", i));
    max_acked_token = std::max(max_acked_token, progress[i].max_acked_token);
    for (auto& reader : readers) ExpectWriterSurvived(*reader, "crash", i, progress[i]);
  }
  for (auto& reader : readers) {
    ASSERT_OK_AND_ASSIGN(auto described, Describe(*reader, "crash"));
    EXPECT_GE(described.max_token(), max_acked_token);
  }
}

}  // namespace
}  // namespace fencegate
