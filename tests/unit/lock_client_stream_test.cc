// What a client library's Lease hears on the lock service's Session stream:
// a lease's end pushed at once (a release from elsewhere, each lease of a
// reentrant hold, a shared lease), and a lease that outlives its stream and
// listens on the next one. Against an in-process lock service
// (lock_client_fixture.h); where time must pass, tests poll a condition
// under a deadline.
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_client_fixture.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;

// What a Lease hears on the lock service's Session stream.
class LockClientStreamTest : public LockClientFixture {
 protected:
  // A lease that renews only after 54 s: what it learns within a test, it
  // learns from the stream, not from a renewal.
  std::unique_ptr<Lease> RarelyRenewed(const std::string& holder,
                                       std::vector<absl::Status>* lost) {
    LeaseOptions options;
    options.renew_fraction = 0.9;
    options.on_lost = [this, lost](const absl::Status& why) {
      absl::MutexLock lock(&mu_);
      lost->push_back(why);
    };
    auto lease = client_->AcquireLease("r", holder, Ttl(absl::Seconds(60)),
                                       std::move(options));
    EXPECT_THAT(lease, IsOk());
    return lease.ok() ? *std::move(lease) : nullptr;
  }

  // A client of its own: its calls come from elsewhere.
  std::unique_ptr<LockClient> Elsewhere() {
    auto other = LockClient::Connect("127.0.0.1:" + std::to_string(server_->port()));
    EXPECT_THAT(other, IsOk());
    return other.ok() ? *std::move(other) : nullptr;
  }

  absl::Mutex mu_;
};

TEST_P(LockClientStreamTest, ALeaseReleasedFromElsewhereHearsItAtOnce) {
  std::vector<absl::Status> lost;
  std::unique_ptr<Lease> lease = RarelyRenewed("alice", &lost);
  ASSERT_NE(lease, nullptr);
  std::unique_ptr<LockClient> operator_client = Elsewhere();
  ASSERT_THAT(operator_client->Release("r", lease->token()), IsOk());
  ASSERT_TRUE(lease->WaitLost(absl::Seconds(20))) << "the pushed end never arrived";
  EXPECT_THAT(lease->Check(),
              StatusIs(absl::StatusCode::kAborted,
                       ::testing::HasSubstr("released by a call from elsewhere")));
  absl::MutexLock lock(&mu_);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_TRUE(IsLeaseLost(lost[0])) << lost[0];
}

TEST_P(LockClientStreamTest, EveryLeaseOfAReentrantHoldHearsTheEnd) {
  std::vector<absl::Status> lost;
  std::unique_ptr<Lease> outer = RarelyRenewed("worker-7", &lost);
  std::unique_ptr<Lease> inner = RarelyRenewed("worker-7", &lost);
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(inner->token(), outer->token());
  std::unique_ptr<LockClient> operator_client = Elsewhere();
  ASSERT_THAT(operator_client->Release("r", outer->token()), IsOk());  // one hold left
  ASSERT_THAT(operator_client->Release("r", outer->token()), IsOk());  // none
  EXPECT_TRUE(outer->WaitLost(absl::Seconds(20)));
  EXPECT_TRUE(inner->WaitLost(absl::Seconds(20)));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(lost.size(), 2u);
}

TEST_P(LockClientStreamTest, ALeaseOutlivesItsStreamAndListensOnTheNextOne) {
  std::vector<absl::Status> lost;
  std::unique_ptr<Lease> lease = RarelyRenewed("alice", &lost);
  ASSERT_NE(lease, nullptr);
  const absl::Time valid_until = lease->valid_until();
  // The service restarts (and restores the lease from its store): the
  // stream ends, and the lease renews at once on the next one.
  const int port = server_->port();
  server_->Shutdown();
  server_.reset();
  lockservice::LockServerOptions options;
  options.serving.listen = "127.0.0.1:" + std::to_string(port);
  options.db_path = dir_.File("locks.db");
  options.limits.min_ttl = absl::Milliseconds(50);
  ASSERT_OK_AND_ASSIGN(server_, lockservice::LockServer::Start(options));
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (lease->valid_until() == valid_until && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));  // polls a condition under a deadline
  }
  ASSERT_GT(lease->valid_until(), valid_until) << "no renewal after the stream ended";
  ASSERT_FALSE(lease->lost());
  // The new stream listens to the lease: a release from elsewhere is pushed.
  std::unique_ptr<LockClient> operator_client = Elsewhere();
  ASSERT_THAT(operator_client->Release("r", lease->token()), IsOk());
  EXPECT_TRUE(lease->WaitLost(absl::Seconds(20)));
  EXPECT_THAT(lease->Check(),
              StatusIs(absl::StatusCode::kAborted,
                       ::testing::HasSubstr("released by a call from elsewhere")));
}

TEST_P(LockClientStreamTest, ASharedLeaseReleasedFromElsewhereHearsItAtOnce) {
  AcquireOptions shared = Ttl(absl::Seconds(60));
  shared.mode = LeaseMode::kShared;
  LeaseOptions options;
  options.renew_fraction = 0.9;  // learns it from the stream, not a renewal
  ASSERT_OK_AND_ASSIGN(
      auto reader1, client_->AcquireLease("r", "reader-1", shared, std::move(options)));
  ASSERT_OK_AND_ASSIGN(auto reader2, client_->AcquireLease("r", "reader-2", shared));
  ASSERT_THAT(Elsewhere()->Release("r", reader1->token()), IsOk());
  EXPECT_TRUE(reader1->WaitLost(absl::Seconds(30)));
  EXPECT_TRUE(IsLeaseLost(reader1->Check()));
  EXPECT_FALSE(reader2->lost());  // each lease ends on its own
}

INSTANTIATE_TEST_SUITE_P(Transports, LockClientStreamTest,
                         ::testing::Values(Transport::kStream), TransportName);

}  // namespace
}  // namespace fencegate::client
