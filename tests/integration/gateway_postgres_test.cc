// Two real fencegate-gateway processes on one PostgreSQL server: one fence
// per resource across both, every acknowledged write kept, and the storage
// in the start-up line. Versions come from one per-resource revision in the
// database, so sorting accepted writes by version gives their commit order
// across both gateways.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_postgres_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(GatewaysOnPostgresTest, ANewerTokenOnOneGatewayShutsOutAnOlderOneOnTheOther) {
  StartGateway(0);
  StartGateway(1);
  std::unique_ptr<Stub> a = StubOf(0);
  std::unique_ptr<Stub> b = StubOf(1);
  ASSERT_THAT(Put(*a, "r", 34, "k", "from 34 via A"), IsOk());

  absl::StatusOr<v1::WriteResponse> stale = Put(*b, "r", 33, "k", "from 33 via B");

  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(InfoOf(stale.status()).reason, ErrorReason::kStaleToken);
  EXPECT_EQ(InfoOf(stale.status()).current_token, 34u);
  ASSERT_OK_AND_ASSIGN(auto read, Read(*b, "r", "k"));
  EXPECT_EQ(read.value(), "from 34 via A");
  ASSERT_OK_AND_ASSIGN(auto described, Describe(*a, "r"));
  EXPECT_EQ(described.max_token(), 34u);
}

// Eight writers, alternately on gateway A and B, take ever larger tokens
// from one counter and race to write one shared key, plus a key of each
// write's own; a paused holder (token 1) wakes up after the first accepted
// write and keeps trying on B. Across both gateways, in commit (version)
// order, the accepted tokens never go down, the paused holder never gets in,
// and every acknowledged write is there afterwards, as acknowledged.
TEST_F(GatewaysOnPostgresTest, ConcurrentWritersOnTwoGatewaysKeepOneFenceAndEveryWrite) {
  StartGateway(0);
  StartGateway(1);
  constexpr int kWriters = 8;
  constexpr int kWritesEach = 30;
  constexpr uint64_t kPausedToken = 1;
  struct Accepted {
    uint64_t version;
    uint64_t token;
    std::string own_key;
  };
  std::atomic<uint64_t> next_token{kPausedToken + 1};
  absl::Notification first_accepted;
  absl::Mutex mu;
  std::vector<Accepted> accepted;
  std::vector<std::string> unexpected;
  int rejected = 0;

  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<Stub> stub = StubOf(i % 2);
      const bool paused = i == 1;  // on gateway B
      if (paused && !first_accepted.WaitForNotificationWithTimeout(absl::Seconds(60))) {
        return;
      }
      for (int n = 0; n < kWritesEach; ++n) {
        const uint64_t token = paused ? kPausedToken : next_token.fetch_add(1);
        const std::string own_key = absl::StrCat("writer", i, "/", n);
        auto result = MultiPut(*stub, "shared", token,
                               {{"k", absl::StrCat(token)}, {own_key, absl::StrCat(token)}});
        absl::MutexLock lock(&mu);
        if (result.ok()) {
          accepted.push_back({result->versions(0), token, own_key});
          if (!first_accepted.HasBeenNotified()) first_accepted.Notify();
        } else if (InfoOf(result.status()).reason == ErrorReason::kStaleToken &&
                   InfoOf(result.status()).current_token > token) {
          ++rejected;
        } else {
          unexpected.push_back(
              absl::StrCat("token ", token, ": ", result.status().ToString()));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  ASSERT_TRUE(unexpected.empty()) << unexpected.size() << ", first: " << unexpected[0];
  ASSERT_TRUE(first_accepted.HasBeenNotified());
  std::sort(accepted.begin(), accepted.end(),
            [](const Accepted& x, const Accepted& y) { return x.version < y.version; });
  for (size_t i = 1; i < accepted.size(); ++i) {
    ASSERT_LT(accepted[i - 1].version, accepted[i].version) << "a version was given twice";
    ASSERT_LE(accepted[i - 1].token, accepted[i].token)
        << "token " << accepted[i].token << " was accepted (version " << accepted[i].version
        << ") after token " << accepted[i - 1].token;
  }
  for (const Accepted& a : accepted) EXPECT_NE(a.token, kPausedToken);
  EXPECT_GE(rejected, kWritesEach);  // at least every write of the paused holder
  EXPECT_EQ(accepted.size() + rejected, size_t{kWriters * kWritesEach});

  // Every acknowledged write, read through the other gateway than it was
  // written on half of the time: there, as acknowledged.
  std::unique_ptr<Stub> readers[2] = {StubOf(0), StubOf(1)};
  for (size_t i = 0; i < accepted.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(auto read, Read(*readers[i % 2], "shared", accepted[i].own_key));
    EXPECT_TRUE(read.found()) << accepted[i].own_key << " is lost";
    EXPECT_EQ(read.value(), absl::StrCat(accepted[i].token));
    EXPECT_EQ(read.version(), accepted[i].version);
  }
  for (auto& reader : readers) {
    ASSERT_OK_AND_ASSIGN(auto shared, Read(*reader, "shared", "k"));
    EXPECT_EQ(shared.value(), absl::StrCat(accepted.back().token));
    EXPECT_EQ(shared.max_token(), accepted.back().token);
  }
}

// The start-up line names the storage but not the password in the URI; a
// URI libpq cannot parse stops the gateway with an error naming --storage.
TEST_F(GatewaysOnPostgresTest, StartUpLogNamesTheStorageButNeverThePassword) {
  const std::string with_password = absl::StrCat(
      "postgresql://fencegate:hunter2@127.0.0.1:", postgres_->port(),
      uri_.substr(uri_.find('/', std::string("postgresql://").size())));
  StartGateway(0, with_password);  // trust authentication ignores it
  std::unique_ptr<Stub> stub = StubOf(0);
  ASSERT_THAT(Put(*stub, "r", 1, "k", "v"), IsOk());
  const std::string log = gateways_[0]->LogTail(100000);
  EXPECT_THAT(log, HasSubstr(absl::StrCat("storage=postgres(user=fencegate")));
  EXPECT_THAT(log, Not(HasSubstr("hunter2")));

  auto bad = testing::ServerProcess::Start(FENCEGATE_GATEWAY_BIN,
                                           {"--storage=postgres://[::1/db"}, dir_.path(),
                                           "bad-gateway");
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInternal, HasSubstr("--storage")));
}

}  // namespace
}  // namespace fencegate
