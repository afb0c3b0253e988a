// Lease listeners: LeaseListeners (the index,
// lockservice/core/lease_listeners.h) on its own, and LockManager telling
// listeners when their leases end (lockservice/core/lease_listener.h), on a
// FakeClock: expiry at the exact instant, a renewal that moves it, releases
// that are told or not, parked grants, shutdown and a failed commit. No test
// sleeps; replies and pushes are delivered after group commit, so each check
// follows Sync(). Every manager test runs on SQLite and on etcd
// (store_under_test.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/lease_listeners.h"
#include "lockservice/core/lock_manager.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::lockservice {
namespace {

using ::absl::Milliseconds;
using ::absl::Seconds;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Records what it is told; its references must come back to one (its own).
class RecordingListener final : public LeaseListener {
 public:
  explicit RecordingListener(std::vector<std::string>* log = nullptr,
                             std::string name = "")
      : log_(log), name_(std::move(name)) {}
  ~RecordingListener() { EXPECT_EQ(refs_, 1) << "a reference was not given back"; }

  void Ref() override {
    absl::MutexLock lock(&mu_);
    ++refs_;
  }
  void Unref() override {
    absl::MutexLock lock(&mu_);
    --refs_;
  }
  void OnLeaseLost(const LeaseLoss& loss) override {
    absl::MutexLock lock(&mu_);
    losses_.push_back(
        absl::StrCat(loss.resource, "/", loss.token, " ",
                     loss.why == LeaseEnd::kExpired ? "expired" : "released"));
    if (log_ != nullptr) log_->push_back(absl::StrCat(name_, " lost ", loss.token));
  }
  void OnStopped(const absl::Status& why) override {
    absl::MutexLock lock(&mu_);
    stopped_ = why;
  }

  std::vector<std::string> losses() {
    absl::MutexLock lock(&mu_);
    return losses_;
  }
  std::optional<absl::Status> stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

 private:
  std::vector<std::string>* const log_;  // shared with the test's callbacks
  const std::string name_;
  absl::Mutex mu_;
  int refs_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::string> losses_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> stopped_ ABSL_GUARDED_BY(mu_);
};

// ------------------------------------------------- LeaseListeners alone

TEST(LeaseListenersTest, ALeasesEndFindsExactlyItsListenersInOrder) {
  RecordingListener a, b, c;
  LeaseListeners index;
  index.Add(&a);
  index.Add(&b);
  index.Add(&c);
  ListenerId seven = 0, eight = 0;  // the leases' own fields
  index.Listen(&b, 7, seven);
  index.Listen(&a, 7, seven);
  index.Listen(&a, 7, seven);  // once is enough
  index.Listen(&b, 7, seven);
  index.Listen(&a, 8, eight);
  ASSERT_THAT(index.CheckInvariant(), IsOk());
  EXPECT_EQ(index.shared_lease_count(), 1u);  // 7 has two listeners, 8 one
  EXPECT_THAT(index.End(7, seven), ElementsAre(&b, &a));
  EXPECT_EQ(seven, 0u);
  EXPECT_THAT(index.End(7, seven), IsEmpty());
  EXPECT_THAT(index.CheckInvariant(), IsOk());
  EXPECT_THAT(index.End(8, eight), ElementsAre(&a));
  EXPECT_EQ(index.shared_lease_count(), 0u);
}

TEST(LeaseListenersTest, ARemovedListenerIsNeverToldAndItsPlaceGoesToTheNext) {
  RecordingListener a, b, c;
  LeaseListeners index;
  index.Add(&a);
  index.Add(&b);
  index.Add(&c);
  ListenerId one = 0, two = 0, three = 0, four = 0;
  index.Listen(&a, 1, one);
  index.Listen(&b, 1, one);
  index.Listen(&c, 1, one);
  index.Listen(&a, 2, two);
  index.Remove(&a);
  ASSERT_THAT(index.CheckInvariant(), IsOk());
  EXPECT_THAT(index.End(2, two), IsEmpty());  // it had only a
  index.Listen(&a, 3, three);                 // a call of a removed listener
  EXPECT_EQ(three, 0u);
  EXPECT_THAT(index.End(3, three), IsEmpty());
  // a's place in lease 1 goes to b, the earliest left, when lease 1 is
  // listened to again; its end reaches b then c, once each.
  index.Listen(&c, 1, one);
  ASSERT_THAT(index.CheckInvariant(), IsOk());
  EXPECT_THAT(index.End(1, one), ElementsAre(&b, &c));
  // A lease whose only listener went takes the next one in its field.
  index.Listen(&b, 4, four);
  index.Remove(&b);
  index.Listen(&c, 4, four);
  EXPECT_EQ(index.shared_lease_count(), 0u);
  EXPECT_THAT(index.End(4, four), ElementsAre(&c));
  RecordingListener never_added;
  ListenerId five = 0;
  index.Listen(&never_added, 5, five);
  EXPECT_EQ(five, 0u);
  std::vector<LeaseListener*> taken = index.TakeAll();
  EXPECT_THAT(taken, ElementsAre(&c));
  EXPECT_EQ(index.listener_count(), 0u);
  StopListeners(std::move(taken), absl::UnavailableError("stopped"));  // the references
}

// ----------------------------------------------------- the lock manager

class LeaseListenerTest : public ::testing::TestWithParam<testing::StoreKind> {
 protected:
  void SetUp() override {
    stores_ = testing::StoreUnderTest::Make(GetParam(), dir_.path());
    auto store = stores_->Open();
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    faulty_ = std::make_unique<testing::FaultyLockStore>(store_.get());
    auto manager = LockManager::Create(faulty_.get(), &clock_, LockLimits());
    ASSERT_THAT(manager, IsOk());
    manager_ = *std::move(manager);
    for (RecordingListener* l : {&a_, &b_}) ASSERT_THAT(manager_->AddListener(l), IsOk());
  }
  void TearDown() override {
    if (manager_ != nullptr) {
      manager_->RemoveListener(&a_);
      manager_->RemoveListener(&b_);
      manager_.reset();  // delivers what is queued: the listeners' references come back
    }
  }

  absl::StatusOr<AcquireResult> Acquire(const std::string& resource,
                                        const std::string& holder,
                                        LeaseListener* listener,
                                        absl::Duration ttl = Seconds(10)) {
    absl::StatusOr<AcquireResult> result = absl::InternalError("no reply");
    AcquireArgs args{resource, holder, ttl, absl::ZeroDuration(), ""};
    args.listener = listener;
    manager_->Acquire(
        manager_->NewCallId(), std::move(args),
        [&result](absl::StatusOr<AcquireResult> r) { result = std::move(r); });
    manager_->Sync();
    return result;
  }
  uint64_t MustAcquire(const std::string& resource, const std::string& holder,
                       LeaseListener* listener, absl::Duration ttl = Seconds(10)) {
    absl::StatusOr<AcquireResult> r = Acquire(resource, holder, listener, ttl);
    EXPECT_THAT(r, IsOk());
    EXPECT_TRUE(r.ok() && r->acquired);
    return r.ok() ? r->token : 0;
  }
  absl::Status Renew(const std::string& resource, uint64_t token, absl::Duration ttl,
                     LeaseListener* listener) {
    absl::Status status = absl::InternalError("no reply");
    RenewArgs args{resource, token, ttl, ""};
    args.listener = listener;
    manager_->Renew(std::move(args),
                    [&status](absl::StatusOr<RenewResult> r) { status = r.status(); });
    manager_->Sync();
    return status;
  }
  absl::Status Release(const std::string& resource, uint64_t token,
                       LeaseListener* listener) {
    absl::Status status = absl::InternalError("no reply");
    ReleaseArgs args{resource, token, "", ""};
    args.listener = listener;
    manager_->Release(std::move(args), [&status](absl::StatusOr<ReleaseResult> r) {
      status = r.status();
    });
    manager_->Sync();
    return status;
  }
  // An Acquire of `resource` with a 3 s TTL that waits up to 30 s; its
  // answer goes to `*answer` (on the commit thread: read it after Sync()).
  void ParkAcquire(const std::string& resource, const std::string& holder,
                   LeaseListener* listener,
                   std::optional<absl::StatusOr<AcquireResult>>* answer) {
    AcquireArgs args{resource, holder, Seconds(3), Seconds(30), ""};
    args.listener = listener;
    manager_->Acquire(manager_->NewCallId(), std::move(args),
                      [answer](absl::StatusOr<AcquireResult> r) { *answer = std::move(r); });
  }
  void Advance(absl::Duration d) {
    clock_.AdvanceBy(d);
    manager_->Sync();
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  std::unique_ptr<testing::StoreUnderTest> stores_;
  std::unique_ptr<LockStore> store_;
  std::unique_ptr<testing::FaultyLockStore> faulty_;
  // Declared before the manager, which holds them until it is gone.
  RecordingListener a_, b_;
  std::unique_ptr<LockManager> manager_;
};

TEST_P(LeaseListenerTest, AnExpiryIsToldAtItsExactInstantAndNotBefore) {
  const uint64_t token = MustAcquire("r", "alice", &a_, Seconds(10));
  Advance(Seconds(10) - Milliseconds(1));
  EXPECT_THAT(a_.losses(), IsEmpty());
  Advance(Milliseconds(1));
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
  EXPECT_THAT(b_.losses(), IsEmpty());  // it never listened
}

TEST_P(LeaseListenerTest, ARenewalMovesTheInstant) {
  const uint64_t token = MustAcquire("r", "alice", &a_, Seconds(10));
  Advance(Seconds(8));
  ASSERT_THAT(Renew("r", token, Seconds(10), &a_), IsOk());  // now ends at 18 s
  Advance(Seconds(2));                                       // the first expiry, 10 s
  EXPECT_THAT(a_.losses(), IsEmpty());
  Advance(Seconds(8) - Milliseconds(1));
  EXPECT_THAT(a_.losses(), IsEmpty());
  Advance(Milliseconds(1));
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
}

TEST_P(LeaseListenerTest, AShorteningRenewalIsToldAtTheNewInstant) {
  const uint64_t token = MustAcquire("r", "alice", &a_, Seconds(10));
  ASSERT_THAT(Renew("r", token, Seconds(1), &a_), IsOk());
  Advance(Seconds(1));
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
}

TEST_P(LeaseListenerTest, AReleaseOnTheListenersOwnCallIsNotTold) {
  const uint64_t token = MustAcquire("r", "alice", &a_);
  ASSERT_THAT(Release("r", token, &a_), IsOk());
  Advance(Seconds(60));
  EXPECT_THAT(a_.losses(), IsEmpty());
}

TEST_P(LeaseListenerTest, AReleaseFromElsewhereIsToldAndTheNextHoldersGrantIsNot) {
  const uint64_t token = MustAcquire("r", "alice", &a_);
  ASSERT_THAT(Release("r", token, /*listener=*/nullptr), IsOk());  // a unary Release
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " released")));
  const uint64_t bobs = MustAcquire("r", "bob", &b_);  // the takeover
  EXPECT_GT(bobs, token);
  EXPECT_THAT(a_.losses(), ::testing::SizeIs(1));
  // And the other way round: another listener's release is told.
  ASSERT_THAT(Release("r", bobs, &a_), IsOk());
  EXPECT_THAT(b_.losses(), ElementsAre(absl::StrCat("r/", bobs, " released")));
}

TEST_P(LeaseListenerTest, AReentrantLeaseIsToldOnceWhenItsLastHoldGoes) {
  const uint64_t token = MustAcquire("r", "alice", &a_);
  ASSERT_EQ(MustAcquire("r", "alice", &a_), token);
  ASSERT_THAT(Release("r", token, nullptr), IsOk());  // one hold left
  EXPECT_THAT(a_.losses(), IsEmpty());
  ASSERT_THAT(Release("r", token, nullptr), IsOk());
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " released")));
}

TEST_P(LeaseListenerTest, EveryListenerThatAcquiredOrRenewedTheLeaseHearsItsEnd) {
  const uint64_t token = MustAcquire("r", "alice", &a_);
  ASSERT_THAT(Renew("r", token, Seconds(5), &b_), IsOk());  // a second stream
  Advance(Seconds(5));
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
  EXPECT_THAT(b_.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
}

TEST_P(LeaseListenerTest, AParkedAcquireListensFromItsGrant) {
  const uint64_t bobs = MustAcquire("r", "bob", nullptr);
  std::optional<absl::StatusOr<AcquireResult>> parked;
  ParkAcquire("r", "alice", &a_, &parked);
  manager_->Sync();
  ASSERT_FALSE(parked.has_value());
  ASSERT_THAT(Release("r", bobs, nullptr), IsOk());
  ASSERT_TRUE(parked.has_value() && parked->ok() && (*parked)->acquired);
  Advance(Seconds(3));
  EXPECT_THAT(a_.losses(), ElementsAre(absl::StrCat("r/", (*parked)->token, " expired")));
}

TEST_P(LeaseListenerTest, AListenerRemovedWhileItsAcquireIsParkedHearsNothingOfItsGrant) {
  const uint64_t bobs = MustAcquire("r", "bob", nullptr);
  std::optional<absl::StatusOr<AcquireResult>> parked;
  ParkAcquire("r", "alice", &a_, &parked);
  manager_->RemoveListener(&a_);  // the stream ended
  ASSERT_THAT(Release("r", bobs, nullptr), IsOk());
  ASSERT_TRUE(parked.has_value() && parked->ok() && (*parked)->acquired);
  Advance(Seconds(3));
  EXPECT_THAT(a_.losses(), IsEmpty());
}

TEST_P(LeaseListenerTest, TheEndIsToldAfterTheReplyThatGrantedTheLease) {
  std::vector<std::string> log;  // written on the commit thread, read after Sync()
  RecordingListener logged(&log, "listener");
  ASSERT_THAT(manager_->AddListener(&logged), IsOk());
  // Grant and expiry decided while one commit is held, so both are
  // delivered by the next batch, in decision order.
  absl::Notification at_store, proceed;
  faulty_->HoldNextCommit(&at_store, &proceed);
  AcquireArgs filler{"other", "carol", Seconds(10), absl::ZeroDuration(), ""};
  manager_->Acquire(manager_->NewCallId(), filler, [](absl::StatusOr<AcquireResult>) {});
  at_store.WaitForNotification();
  AcquireArgs args{"r", "alice", Milliseconds(100), absl::ZeroDuration(), ""};
  args.listener = &logged;
  manager_->Acquire(manager_->NewCallId(), args, [&log](absl::StatusOr<AcquireResult> r) {
    log.push_back(absl::StrCat("granted ", r.ok() ? r->token : 0));
  });
  clock_.AdvanceBy(Milliseconds(100));  // expires before its grant is committed
  proceed.Notify();
  manager_->Sync();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], absl::StrCat("granted ", log[1].substr(log[1].rfind(' ') + 1)));
  EXPECT_EQ(log[1].substr(0, 14), "listener lost ");
  manager_->RemoveListener(&logged);
}

TEST_P(LeaseListenerTest, ShutdownStopsEveryListenerAndAddsNoMore) {
  MustAcquire("r", "alice", &a_);
  manager_->Shutdown();
  ASSERT_TRUE(a_.stopped().has_value());
  EXPECT_THAT(*a_.stopped(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_TRUE(b_.stopped().has_value());
  RecordingListener late;
  EXPECT_THAT(manager_->AddListener(&late), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_P(LeaseListenerTest, AFailedCommitStopsEveryListenerAndARenewalListensAgain) {
  const uint64_t token = MustAcquire("r", "alice", &a_, Seconds(10));
  faulty_->FailNthCommit(1);
  EXPECT_THAT(Acquire("s", "bob", &b_), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_TRUE(a_.stopped().has_value());
  EXPECT_THAT(*a_.stopped(), StatusIs(absl::StatusCode::kUnavailable));
  // The committed lease is still there (held for a full TTL again); a
  // renewal on a listener added now makes it listen again.
  RecordingListener again;
  ASSERT_THAT(manager_->AddListener(&again), IsOk());
  ASSERT_THAT(Renew("r", token, Seconds(2), &again), IsOk());
  Advance(Seconds(2));
  EXPECT_THAT(again.losses(), ElementsAre(absl::StrCat("r/", token, " expired")));
  EXPECT_THAT(a_.losses(), IsEmpty());
  manager_->RemoveListener(&again);
}

INSTANTIATE_TEST_SUITE_P(Stores, LeaseListenerTest,
                         ::testing::Values(testing::StoreKind::kSqlite,
                                           testing::StoreKind::kEtcd),
                         testing::StoreKindName);

}  // namespace
}  // namespace fencegate::lockservice
