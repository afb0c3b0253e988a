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

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_postgres_fixture.h"
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
  struct Progress {  // written by its writer thread only; read after join
    int64_t attempted = -1;
    int64_t acked = -1;
    uint64_t acked_version = 0;
    uint64_t max_acked_token = 0;
    std::string error;  // why it stopped, if not told to
  };
  std::vector<Progress> progress(kWriters);
  std::atomic<uint64_t> next_token{1};
  std::atomic<int> acks{0};
  std::atomic<int> acks_on_b_after_kill{0};
  std::atomic<bool> killed{false};
  std::atomic<bool> stop{false};
  absl::Notification enough_acks;
  absl::Notification b_went_on;

  auto keys_of = [](int writer) {
    return std::vector<std::string>{absl::StrCat("w", writer, "/a"),
                                    absl::StrCat("w", writer, "/b"),
                                    absl::StrCat("w", writer, "/c")};
  };
  // Every writer's connection is made before the load starts: one made by a
  // writer thread that starts late could find gateway A already killed.
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < kWriters; ++i) stubs.push_back(StubOf(i % 2 == 0 ? 0 : 1));
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      const bool on_a = i % 2 == 0;
      Stub* stub = stubs[i].get();
      Progress& mine = progress[i];
      for (int64_t seq = 0; seq < 1000000 && !stop.load(); ++seq) {
        const uint64_t token = next_token.fetch_add(1);
        const std::string value = absl::StrCat(i, ":", seq);
        std::vector<std::pair<std::string, std::string>> pairs;
        for (const std::string& key : keys_of(i)) pairs.emplace_back(key, value);
        mine.attempted = seq;
        auto result = MultiPut(*stub, "crash", token, pairs);
        if (result.ok()) {
          mine.acked = seq;
          mine.acked_version = result->versions(0);
          mine.max_acked_token = std::max(mine.max_acked_token, token);
          if (acks.fetch_add(1) + 1 == kAcksBeforeKill) enough_acks.Notify();
          if (!on_a && killed.load() &&
              acks_on_b_after_kill.fetch_add(1) + 1 == kAcksOnBAfterKill) {
            b_went_on.Notify();
          }
        } else if (result.status().code() != absl::StatusCode::kAborted) {
          mine.error = result.status().ToString();  // A is gone, or a failure
          return;
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
      EXPECT_FALSE(progress[i].error.empty()) << "writer " << i << " outlived gateway A";
    } else {
      EXPECT_EQ(progress[i].error, "") << "writer " << i << " on gateway B";
    }
  }

  StartGateway(0);
  std::unique_ptr<Stub> readers[2] = {StubOf(0), StubOf(1)};
  uint64_t max_acked_token = 0;
  for (int i = 0; i < kWriters; ++i) {
    SCOPED_TRACE(absl::StrCat("writer ", i));
    const Progress& mine = progress[i];
    max_acked_token = std::max(max_acked_token, mine.max_acked_token);
    for (auto& reader : readers) {
      std::vector<v1::ReadResponse> reads;
      for (const std::string& key : keys_of(i)) {
        ASSERT_OK_AND_ASSIGN(auto read, Read(*reader, "crash", key));
        reads.push_back(read);
      }
      // Nothing half-applied: the three keys come from one request.
      for (const v1::ReadResponse& read : reads) {
        EXPECT_EQ(read.found(), reads[0].found());
        EXPECT_EQ(read.value(), reads[0].value());
        EXPECT_EQ(read.version(), reads[0].version());
      }
      if (mine.acked < 0) continue;  // nothing acknowledged, nothing promised
      ASSERT_TRUE(reads[0].found()) << "acknowledged write " << mine.acked << " is lost";
      std::vector<std::string> parts = absl::StrSplit(reads[0].value(), ':');
      int64_t seq = -1;
      ASSERT_EQ(parts.size(), 2u);
      ASSERT_TRUE(absl::SimpleAtoi(parts[1], &seq));
      EXPECT_GE(seq, mine.acked) << "an acknowledged write was lost";
      EXPECT_LE(seq, mine.attempted);
      if (seq == mine.acked) {
        EXPECT_EQ(reads[0].version(), mine.acked_version);
      }
    }
  }
  for (auto& reader : readers) {
    ASSERT_OK_AND_ASSIGN(auto described, Describe(*reader, "crash"));
    EXPECT_GE(described.max_token(), max_acked_token);
  }
}

}  // namespace
}  // namespace fencegate
