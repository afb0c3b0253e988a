// What only the PostgreSQL backend has: several gateways on one database
// (lock order, no deadlock, no version given twice), connections that are
// lost (during COMMIT: an unknown outcome; while idle: reconnected), the
// schema created by gateways starting together, the session settings it
// insists on, and its connection URI. The semantics shared with SQLite are
// in gateway_fenced_store_test.cc and gateway_group_commit_test.cc.
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_postgres_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

// Two gateways' batches touch "a" and "b" in opposite orders. Had each op
// locked its row only when applied, A would hold b and wait for a while B
// holds a and waits for b: a deadlock, and one batch failing after
// deadlock_timeout. Rows locked up front in name order make B wait for A.
TEST_F(PostgresStoreTest, OppositeOrdersInTwoGatewaysWaitInsteadOfDeadlocking) {
  std::unique_ptr<StorageBackend> a = OpenBackend();
  std::unique_ptr<StorageBackend> b = OpenBackend();
  ASSERT_THAT(a->BeginBatch({"b", "a"}), IsOk());
  OpResult result;
  ASSERT_THAT(a->Apply(WriteOp("b", 1, "from A"), &result), IsOk());

  absl::Status b_status;
  std::vector<Outcome> b_outcomes;
  std::thread other([&] {
    b_status = b->BeginBatch({"a", "b"});
    for (const char* resource : {"a", "b"}) {
      OpResult r;
      if (b_status.ok()) b_status = b->Apply(WriteOp(resource, 2, "from B"), &r);
      b_outcomes.push_back(r.outcome);
    }
    if (b_status.ok()) b_status = b->CommitBatch();
  });
  // B is parked on a row lock of A's: its batch cannot have taken "a" first.
  EXPECT_THAT(AwaitValue(kSessionWaitingForALock), IsOk());
  ASSERT_THAT(a->Apply(WriteOp("a", 1, "from A"), &result), IsOk());
  EXPECT_EQ(result.outcome, Outcome::kAccepted);
  EXPECT_THAT(a->CommitBatch(), IsOk());
  other.join();

  EXPECT_THAT(b_status, IsOk());
  EXPECT_THAT(b_outcomes, ::testing::ElementsAre(Outcome::kAccepted, Outcome::kAccepted));
  for (const char* resource : {"a", "b"}) {
    SCOPED_TRACE(resource);
    EXPECT_EQ(ValueOf(resource, "k"), "from B");
    EXPECT_EQ(FenceOf(resource), 2u);
  }
}

// Two gateways, each with four writers that send a round of writes to eight
// shared resources at once (gateway A in one order, B in the reverse), so
// their batches hold many resources in opposite orders. Every write carries
// the resources' current token: none may be refused or fail (a deadlock
// would fail a batch), every acknowledged write is there afterwards, and no
// version of a resource is given twice.
TEST_F(PostgresStoreTest, TwoGatewaysWritingSharedResourcesInOppositeOrdersLoseNothing) {
  constexpr int kResources = 8;
  constexpr int kWritersPerGateway = 4;
  constexpr int kRounds = 12;
  constexpr uint64_t kToken = 7;
  Gateway other = OpenGateway();
  FencedStore* const gateways[2] = {store_.get(), other.store.get()};
  std::vector<std::string> resources;
  for (int i = 0; i < kResources; ++i) {
    resources.push_back(absl::StrCat("shared-", i));
    ASSERT_THAT(Fence(resources.back(), kToken), IsOk());
  }

  absl::Mutex mu;
  std::map<std::string, std::vector<uint64_t>> versions;  // per resource
  std::vector<std::string> failures;
  std::vector<std::thread> writers;
  for (int g = 0; g < 2; ++g) {
    for (int w = 0; w < kWritersPerGateway; ++w) {
      writers.emplace_back([&, g, w] {
        const std::string key = absl::StrCat("gateway", g, "-writer", w);
        for (int round = 0; round < kRounds; ++round) {
          std::vector<std::pair<std::string, ReplyPtr<WriteResult>>> replies;
          for (int i = 0; i < kResources; ++i) {
            const std::string& resource = resources[g == 0 ? i : kResources - 1 - i];
            replies.emplace_back(resource, StartPut(resource, kToken, key,
                                                    absl::StrCat(round), gateways[g]));
          }
          for (auto& [resource, reply] : replies) {
            absl::StatusOr<WriteResult> written = reply->Wait();
            absl::MutexLock lock(&mu);
            if (written.ok()) {
              versions[resource].push_back(written->version);
            } else {
              failures.push_back(absl::StrCat(key, " on ", resource, ": ",
                                              written.status().ToString()));
            }
          }
        }
      });
    }
  }
  for (std::thread& t : writers) t.join();

  ASSERT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures[0];
  for (const std::string& resource : resources) {
    SCOPED_TRACE(resource);
    const std::vector<uint64_t>& seen = versions[resource];
    const std::set<uint64_t> distinct(seen.begin(), seen.end());
    EXPECT_EQ(distinct.size(), seen.size()) << "a version was given twice";
    EXPECT_EQ(*distinct.rbegin(), uint64_t{2 * kWritersPerGateway * kRounds});
    for (int g = 0; g < 2; ++g) {
      for (int w = 0; w < kWritersPerGateway; ++w) {
        EXPECT_EQ(ValueOf(resource, absl::StrCat("gateway", g, "-writer", w)),
                  absl::StrCat(kRounds - 1));
      }
    }
  }
}

// Another gateway raised the fence to 9 after this one committed 5. A
// fence cache here would have refused token 3 at once naming 5, a fence
// older than the 9 already acknowledged (the torture's
// fence-never-below-acknowledged-token caught that). PostgreSQL is not the
// sole writer of its fences, so the store keeps no cache over it: every
// refusal, of 3 and of 7, comes from the transaction and names 9.
TEST_F(PostgresStoreTest, ARefusalNamesTheFenceAnotherGatewayRaised) {
  EXPECT_FALSE(store_->refuses_from_memory());
  ASSERT_THAT(Write("r", 5, Put("k", "from 5")), IsOk());
  Gateway other = OpenGateway();
  ASSERT_NE(other.store, nullptr);
  ASSERT_THAT(StartPut("r", 9, "k", "from 9", other.store.get())->Wait(), IsOk());

  for (uint64_t token : {3, 7}) {
    SCOPED_TRACE(token);
    absl::StatusOr<WriteResult> stale = Write("r", token, Put("k", "stale"));
    EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted));
    EXPECT_EQ(InfoOf(stale.status()).current_token, 9u);
  }
  EXPECT_EQ(ValueOf("r", "k"), "from 9");
}

// The connection is lost while COMMIT runs (the server is told to end the
// session while a deferred trigger holds the COMMIT back): the gateway
// cannot know whether the batch committed and must not say "nothing was
// applied". The next batch reconnects.
TEST_F(PostgresStoreTest, ConnectionLostDuringCommitIsAnUnknownOutcome) {
  ASSERT_THAT(Execute(R"sql(
      CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_lock(4242); PERFORM pg_advisory_unlock(4242);
      RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON fencegate_objects
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.key = 'held')
      EXECUTE FUNCTION hold_commit())sql"),
              IsOk());
  auto holder = std::make_unique<pqxx::connection>(uri());
  pqxx::nontransaction(*holder).exec("SELECT pg_advisory_lock(4242)");

  ReplyPtr<WriteResult> held = StartPut("r", 1, "held", "v");
  absl::StatusOr<std::string> pid = AwaitValue(
      "SELECT pid FROM pg_stat_activity WHERE query = 'COMMIT' AND wait_event = 'advisory'");
  ASSERT_THAT(pid, IsOk());
  EXPECT_EQ(QueryValue(uri(), absl::StrCat("SELECT pg_terminate_backend(", *pid, ")")),
            "t");

  EXPECT_THAT(held->Wait(), StatusIs(absl::StatusCode::kUnavailable,
                                     HasSubstr("may or may not have been applied")));
  EXPECT_THAT(held->Wait(), Not(StatusIs(absl::StatusCode::kUnavailable,
                                         HasSubstr("nothing was applied"))));
  holder.reset();
  ASSERT_OK_AND_ASSIGN(WriteResult next, Write("r", 1, Put("after", "v")));
  EXPECT_EQ(ValueOf("r", "after"), "v");
  // Terminated before its commit record: in fact it rolled back.
  EXPECT_EQ(ValueOf("r", "held"), "<absent>");
  EXPECT_EQ(next.version, 1u);
}

// Every session of the gateway is ended while idle (a database restart, a
// proxy's idle timeout): the next write and the next read each get a new
// connection instead of failing.
TEST_F(PostgresStoreTest, ConnectionsLostWhileIdleAreReplacedWithoutFailingACall) {
  ASSERT_THAT(Write("r", 1, Put("k", "before")), IsOk());
  ASSERT_EQ(ValueOf("r", "k"), "before");
  int ended = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      QueryValue(uri(), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE application_name = 'fencegate-gateway'"),
      &ended));
  EXPECT_GE(ended, 3);  // the writer and two readers

  EXPECT_THAT(Write("r", 1, Put("k", "after")), IsOk());
  EXPECT_EQ(ValueOf("r", "k"), "after");
  EXPECT_EQ(FenceOf("r"), 1u);
}

}  // namespace
}  // namespace fencegate::gateway
