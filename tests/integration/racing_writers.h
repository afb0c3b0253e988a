// The race of the gateway's concurrency tests, on SQLite
// (gateway_durability_test.cc) and on two gateways sharing PostgreSQL
// (gateway_postgres_test.cc): writers take ever larger tokens from one
// counter and race to write one resource; one of them is a paused holder
// that wakes up after the first accepted write and keeps writing with
// token 1. RaceWriters() runs it; ExpectTokensNeverDecreaseInCommitOrder()
// checks that in commit (version) order the accepted tokens never go down,
// every write was accepted or refused as stale, and the paused holder never
// got in.
//
// Thread safety: RaceWriters() runs its writers on threads of their own and
// joins them before it returns; the callbacks it is given run on those
// threads.
#ifndef FENCEGATE_TESTS_INTEGRATION_RACING_WRITERS_H_
#define FENCEGATE_TESTS_INTEGRATION_RACING_WRITERS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
#include "tests/testing/error_info.h"

namespace fencegate {

// The token of the paused holder; the others' start above it.
inline constexpr uint64_t kPausedToken = 1;

// One accepted write: the version it was given, its token, and the key of
// its own it wrote (if any).
struct AcceptedWrite {
  uint64_t version = 0;
  uint64_t token = 0;
  std::string own_key;
};

// What the race came to.
struct RaceResult {
  int writers = 0;
  int writes_each = 0;
  std::vector<AcceptedWrite> accepted;  // in version (commit) order
  int rejected = 0;                     // refused as stale by a newer token
  std::vector<std::string> unexpected;  // any other answer
  bool someone_wrote = false;
};

struct RaceOptions {
  int writers = 8;
  int writes_each = 30;
  int paused = 0;  // the index of the paused holder
  // Writer i's stub, on a connection of its own.
  std::function<std::unique_ptr<GatewayProcessTest::Stub>(int writer)> stub_of;
  // Writes with `token` through `stub` (and `own_key`, a key no other
  // write uses, if the test wants one); the version the write was given.
  std::function<absl::StatusOr<uint64_t>(GatewayProcessTest::Stub& stub, uint64_t token,
                                         const std::string& own_key)>
      write;
};

// Runs the race: `writes_each` writes of each writer, writer i's own keys
// "writer<i>/<n>".
inline RaceResult RaceWriters(const RaceOptions& options) {
  RaceResult race;
  race.writers = options.writers;
  race.writes_each = options.writes_each;
  std::atomic<uint64_t> next_token{kPausedToken + 1};
  absl::Notification first_accepted;
  absl::Mutex mu;
  std::vector<std::thread> threads;
  for (int i = 0; i < options.writers; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<GatewayProcessTest::Stub> stub = options.stub_of(i);
      const bool paused = i == options.paused;
      if (paused && !first_accepted.WaitForNotificationWithTimeout(absl::Seconds(60))) {
        return;
      }
      for (int n = 0; n < options.writes_each; ++n) {
        const uint64_t token = paused ? kPausedToken : next_token.fetch_add(1);
        const std::string own_key = absl::StrCat("writer", i, "/", n);
        absl::StatusOr<uint64_t> version = options.write(*stub, token, own_key);
        absl::MutexLock lock(&mu);
        if (version.ok()) {
          race.accepted.push_back({*version, token, own_key});
          if (!first_accepted.HasBeenNotified()) first_accepted.Notify();
          continue;
        }
        const ErrorInfo info = InfoOf(version.status());
        if (info.reason == ErrorReason::kStaleToken && info.current_token > token) {
          ++race.rejected;
        } else {
          race.unexpected.push_back(
              absl::StrCat("token ", token, ": ", version.status().ToString()));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  race.someone_wrote = first_accepted.HasBeenNotified();
  std::sort(race.accepted.begin(), race.accepted.end(),
            [](const AcceptedWrite& x, const AcceptedWrite& y) { return x.version < y.version; });
  return race;
}

// Nothing unexpected; in commit order every version is new and no token
// is below an earlier one; the paused holder never got in; every write was
// accepted or refused as stale, and at least every one of the paused
// holder's refused. Fatal failures: call it in ASSERT_NO_FATAL_FAILURE.
inline void ExpectTokensNeverDecreaseInCommitOrder(const RaceResult& race) {
  ASSERT_TRUE(race.unexpected.empty())
      << race.unexpected.size() << ", first: " << race.unexpected[0];
  ASSERT_TRUE(race.someone_wrote);
  const std::vector<AcceptedWrite>& accepted = race.accepted;
  for (size_t i = 1; i < accepted.size(); ++i) {
    ASSERT_LT(accepted[i - 1].version, accepted[i].version) << "a version was given twice";
    ASSERT_LE(accepted[i - 1].token, accepted[i].token)
        << "token " << accepted[i].token << " was accepted (version " << accepted[i].version
        << ") after token " << accepted[i - 1].token << " (version "
        << accepted[i - 1].version << ")";
  }
  for (const AcceptedWrite& a : accepted) EXPECT_NE(a.token, kPausedToken);
  EXPECT_GE(race.rejected, race.writes_each);  // at least every write of the paused holder
  EXPECT_EQ(accepted.size() + race.rejected, size_t(race.writers * race.writes_each));
}

}  // namespace fencegate

#endif  // FENCEGATE_TESTS_INTEGRATION_RACING_WRITERS_H_
