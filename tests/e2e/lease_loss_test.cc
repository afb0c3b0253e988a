// A Lease (client library, in this process) against the real lock service
// binary: it must report itself lost
//   - no later than its TTL after the last successful renew was SENT, when
//     the lock service becomes unreachable (stopped with SIGSTOP: calls
//     hang; or killed: connections are refused), and
//   - at once when a renew is refused because someone freed the lock (here
//     an operator, with the real CLI).
// Times are on the client's monotonic clock (SteadyClock). The bound gets a
// scheduling tolerance of kTolerance: the callback runs on the renewal
// thread, which must wake up and be scheduled on a loaded 2-core machine.
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "fencegate/client/errors.h"
#include "fencegate/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using client::AcquireOptions;
using client::Lease;
using client::LeaseOptions;

constexpr absl::Duration kLeaseTtl = absl::Seconds(1);
constexpr absl::Duration kTolerance = absl::Milliseconds(300);

// Records when and why on_lost ran.
struct LossRecord {
  absl::Notification lost;
  absl::Time at;
  absl::Status why;

  LeaseOptions Options(double renew_fraction) {
    LeaseOptions options;
    options.renew_fraction = renew_fraction;
    options.on_lost = [this](const absl::Status& status) {
      at = SteadyClock().Now();
      why = status;
      lost.Notify();
    };
    return options;
  }
};

class LeaseLossTest : public E2eTest {
 protected:
  // Acquires `resource` as a Lease whose background renewal waits 90% of
  // the TTL, renews it explicitly, and stops the lock service with
  // `signal` right after. Returns when the renew was sent; the explicit
  // renew is then the last one that succeeded.
  void AcquireRenewAndStopServer(int signal, LossRecord& record,
                                 std::unique_ptr<Lease>& lease, absl::Time& last_sent) {
    AcquireOptions options;
    options.ttl = kLeaseTtl;
    ASSERT_OK_AND_ASSIGN(lease,
                         lock_->AcquireLease("r", "alice", options,
                                             record.Options(/*renew_fraction=*/0.9)));
    last_sent = SteadyClock().Now();
    ASSERT_THAT(lease->Renew(), testing::IsOk());
    if (signal == SIGSTOP) {
      ASSERT_THAT(lockservice_->Pause(), testing::IsOk());
    } else {
      ASSERT_EQ(signal, SIGKILL);
      lockservice_->Kill();  // and reaps it
    }
    // Otherwise a background renew may have succeeded after ours.
    ASSERT_LT(SteadyClock().Now() - last_sent, kLeaseTtl * 0.9)
        << "the machine stalled; the background renewal may have run";
  }

  void ExpectLostWithinTtlOfLastRenewSent(LossRecord& record, Lease& lease,
                                          absl::Time last_sent) {
    ASSERT_TRUE(record.lost.WaitForNotificationWithTimeout(kLeaseTtl + absl::Seconds(10)))
        << "the lease never reported itself lost";
    EXPECT_TRUE(client::IsLeaseLost(record.why)) << record.why;
    // Not before its validity ended: the renew was sent at or after last_sent.
    EXPECT_GE(record.at, last_sent + kLeaseTtl);
    // And no later than the TTL after that renew was sent, plus scheduling.
    EXPECT_LE(record.at, last_sent + kLeaseTtl + kTolerance)
        << "lost " << absl::FormatDuration(record.at - last_sent)
        << " after the last renew was sent";
    EXPECT_TRUE(lease.lost());
    EXPECT_TRUE(client::IsLeaseLost(lease.Check()));
  }

  // Both of the above; a server stopped with SIGSTOP is then resumed, to
  // release the lease and shut down normally.
  void StopServerThenExpectLeaseLost(int signal) {
    LossRecord record;
    std::unique_ptr<Lease> lease;
    absl::Time last_sent;
    ASSERT_NO_FATAL_FAILURE(AcquireRenewAndStopServer(signal, record, lease, last_sent));
    ExpectLostWithinTtlOfLastRenewSent(record, *lease, last_sent);
    if (signal == SIGSTOP) lockservice_->Resume();
  }
};

TEST_F(LeaseLossTest, StoppedLockServiceLeaseReportsLostWithinTtlOfLastRenewSent) {
  StopServerThenExpectLeaseLost(SIGSTOP);
}

TEST_F(LeaseLossTest, KilledLockServiceLeaseReportsLostWithinTtlOfLastRenewSent) {
  StopServerThenExpectLeaseLost(SIGKILL);
}

TEST_F(LeaseLossTest, RefusedRenewIsReportedAtOnce) {
  LossRecord record;
  AcquireOptions options;
  options.ttl = absl::Seconds(3);
  // Background renewals every second.
  ASSERT_OK_AND_ASSIGN(
      auto lease, lock_->AcquireLease("r", "alice", options, record.Options(1.0 / 3)));
  // An operator frees the lock behind the lease's back, with the CLI.
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult release,
      Cli({"release", "--resource=r", absl::StrCat("--token=", lease->token())}));
  ASSERT_EQ(release.exit_code, 0) << release.stderr_text;
  const absl::Time released = SteadyClock().Now();
  const absl::Time valid_until = lease->valid_until();

  // The lock service pushes the end on the client's Session stream at once
  // (over unary calls, the next renewal, within a second, is refused); the
  // lease says so then, not when its validity would have run out.
  ASSERT_TRUE(record.lost.WaitForNotificationWithTimeout(absl::Seconds(15)));
  EXPECT_TRUE(client::IsLeaseLost(record.why)) << record.why;
  EXPECT_THAT(std::string(record.why.message()),
              ::testing::Not(::testing::HasSubstr("lapsed")));
  EXPECT_LE(record.at, released + absl::Seconds(1) + kTolerance);
  EXPECT_LT(record.at, valid_until);
  EXPECT_TRUE(lease->lost());
  // An explicit renew now is refused locally, with the same reason.
  EXPECT_TRUE(client::IsLeaseLost(lease->Renew()));
}

}  // namespace
}  // namespace fencegate::e2e
