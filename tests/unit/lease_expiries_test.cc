// LeaseExpiries (lockservice/core/lease_expiries.h): the held leases by expiry,
// the one clock timer for the earliest, and the max_hold cap, on a
// FakeClock. No LockManager: the leases are the test's own.
#include "lockservice/core/lease_expiries.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"

namespace fencegate::lockservice {
namespace {

class LeaseExpiriesTest : public ::testing::Test {
 protected:
  HeldLease Lease(uint64_t token, absl::Duration ttl) {
    HeldLease lease;
    lease.token = token;
    lease.acquired_at = CompactTime(clock_.Now());
    lease.expiry = CompactTime(clock_.Now() + ttl);
    return lease;
  }
  // What the manager's expiry timer does: ends every lease due, in expiry
  // order, then arms the timer for the next.
  void OnTimer() {
    expiries_.Fired();
    for (;;) {
      const DeadlineIndex::Entry due = expiries_.Due(clock_.Now());
      if (due.resource == nullptr) break;
      ended_.push_back(due.id);
      expiries_.Remove(due);
    }
    expiries_.Arm();
  }

  testing::FakeClock clock_;
  std::vector<uint64_t> ended_;
  LeaseExpiries expiries_{&clock_, [this](absl::Time at) {
                            return clock_.RunAt(at, [this] { OnTimer(); });
                          }};
  const std::string resource_ = "r";
};

TEST_F(LeaseExpiriesTest, EndsLeasesInExpiryOrderAndCountsThoseHeld) {
  HeldLease late = Lease(1, absl::Seconds(30));
  HeldLease early = Lease(2, absl::Seconds(10));
  expiries_.Add(resource_, late);
  expiries_.Add(resource_, early);
  EXPECT_EQ(expiries_.size(), 2u);
  clock_.AdvanceBy(absl::Seconds(9));
  EXPECT_TRUE(ended_.empty());
  clock_.AdvanceBy(absl::Seconds(1));
  EXPECT_EQ(ended_, std::vector<uint64_t>{2});
  EXPECT_EQ(expiries_.size(), 1u);
  clock_.AdvanceBy(absl::Seconds(20));
  EXPECT_EQ(ended_, (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(expiries_.size(), 0u);
}

TEST_F(LeaseExpiriesTest, AMovedExpiryIsWhenTheLeaseEnds) {
  HeldLease lease = Lease(1, absl::Seconds(10));
  expiries_.Add(resource_, lease);
  expiries_.Move(lease, clock_.Now() + absl::Seconds(40));  // a renewal
  EXPECT_EQ(lease.expiry.get(), clock_.Now() + absl::Seconds(40));
  clock_.AdvanceBy(absl::Seconds(11));  // past the first expiry
  EXPECT_TRUE(ended_.empty());
  // Earlier than the timer armed (a max_hold cap): the timer moves too.
  expiries_.Move(lease, clock_.Now() + absl::Seconds(1));
  clock_.AdvanceBy(absl::Seconds(1));
  EXPECT_EQ(ended_, std::vector<uint64_t>{1});
}

TEST_F(LeaseExpiriesTest, RemovingTheLastLeaseCancelsTheTimer) {
  HeldLease lease = Lease(1, absl::Seconds(10));
  expiries_.Add(resource_, lease);
  EXPECT_EQ(clock_.PendingTimers(), 1u);
  expiries_.Remove(lease);  // released
  EXPECT_EQ(expiries_.size(), 0u);
  EXPECT_EQ(clock_.PendingTimers(), 0u);
}

TEST(CappedExpiryTest, MaxHoldCapsTheExpiryFromTheGrant) {
  const absl::Time granted = absl::FromUnixSeconds(1000);
  HeldLease lease;
  lease.acquired_at = CompactTime(granted);
  const absl::Time now = granted + absl::Seconds(50);
  EXPECT_EQ(CappedExpiry(lease, absl::Seconds(30), now, absl::ZeroDuration()),
            now + absl::Seconds(30));  // no cap
  EXPECT_EQ(CappedExpiry(lease, absl::Seconds(30), now, absl::Seconds(60)),
            granted + absl::Seconds(60));
  EXPECT_EQ(CappedExpiry(lease, absl::Seconds(5), now, absl::Seconds(60)),
            now + absl::Seconds(5));
}

}  // namespace
}  // namespace fencegate::lockservice
