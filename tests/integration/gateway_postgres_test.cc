// Two real fencegate-gateway processes on one PostgreSQL server: one fence
// per resource across both, every acknowledged write kept, and the storage
// in the start-up line. Versions come from one per-resource revision in the
// database, so sorting accepted writes by version gives their commit order
// across both gateways.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_postgres_fixture.h"
#include "tests/integration/racing_writers.h"
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
  RaceOptions options;
  options.writers = 8;
  options.writes_each = 30;
  options.paused = 1;  // on gateway B
  options.stub_of = [this](int writer) { return StubOf(writer % 2); };
  options.write = [](Stub& stub, uint64_t token,
                     const std::string& own_key) -> absl::StatusOr<uint64_t> {
    auto result = MultiPut(stub, "shared", token,
                           {{"k", absl::StrCat(token)}, {own_key, absl::StrCat(token)}});
    if (!result.ok()) return result.status();
    return result->versions(0);
  };
  const RaceResult race = RaceWriters(options);
  ASSERT_NO_FATAL_FAILURE(ExpectTokensNeverDecreaseInCommitOrder(race));
  const std::vector<AcceptedWrite>& accepted = race.accepted;

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
