// The fixture of the Session stream's tests without gRPC
// (lock_session_test.cc, lock_session_election_test.cc): a session on a
// fake transport (lock_session_harness.h) over a real LockManager on SQLite
// (through FaultyLockStore) and a FakeClock, with calls "from elsewhere"
// and Settle(), which delivers everything the manager decided.
//
// Thread safety: a gtest fixture; the test's thread owns it.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_SESSION_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_LOCK_SESSION_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>

#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "tests/testing/error_info.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/lock_session_harness.h"

namespace fencegate::lockservice {

using ::fencegate::testing::InfoOf;

class LockSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    protocol_errors_before_ = testing::StreamHarness::ProtocolErrors();
    auto store = SqliteLockStore::Open(dir_.File("locks.db"));
    ASSERT_THAT(store, ::fencegate::testing::IsOk());
    store_ = *std::move(store);
    faulty_ = std::make_unique<testing::FaultyLockStore>(store_.get());
    auto manager = LockManager::Create(faulty_.get(), &clock_, LockLimits());
    ASSERT_THAT(manager, ::fencegate::testing::IsOk());
    manager_ = *std::move(manager);
  }
  void TearDown() override {
    EXPECT_EQ(testing::StreamHarness::ProtocolErrors(), protocol_errors_before_)
        << "a session broke the transport's rules (see the log)";
  }

  std::unique_ptr<LockSessionHarness> NewSession(size_t max_in_flight = 256) {
    StreamLimits limits;
    limits.max_in_flight = max_in_flight;
    return std::make_unique<LockSessionHarness>(manager_, limits);
  }

  // Everything the manager decided so far is delivered, and every message
  // the session wrote because of it is taken.
  void Settle(LockSessionHarness& s) {
    manager_->Sync();
    manager_->Sync();  // the first Sync's batch has flushed its streams
    s.TakeAll();
  }

  // Unary-style calls, from elsewhere than the stream.
  uint64_t AcquireElsewhere(const std::string& resource, const std::string& holder) {
    absl::StatusOr<AcquireResult> result = absl::InternalError("no reply");
    manager_->Acquire(
        manager_->NewCallId(),
        AcquireArgs{resource, holder, absl::Seconds(60), absl::ZeroDuration(), ""},
        [&result](absl::StatusOr<AcquireResult> r) { result = std::move(r); });
    manager_->Sync();
    EXPECT_TRUE(result.ok() && result->acquired) << result.status();
    return result.ok() ? result->token : 0;
  }
  absl::Status ReleaseElsewhere(const std::string& resource, uint64_t token) {
    absl::Status status = absl::InternalError("no reply");
    manager_->Release(
        ReleaseArgs{resource, token, "", ""},
        [&status](absl::StatusOr<ReleaseResult> r) { status = r.status(); });
    manager_->Sync();
    return status;
  }
  ResourceInfo Describe(const std::string& resource) {
    ResourceInfo info;
    manager_->Describe(resource, [&info](absl::StatusOr<ResourceInfo> r) {
      if (r.ok()) info = *r;
    });
    manager_->Sync();
    return info;
  }

  // The token the stream's answer to `id` granted.
  static uint64_t Granted(LockSessionHarness& s, uint64_t id) {
    absl::StatusOr<::fencegate::v1::LockResult> answer = s.WaitForAnswer(id);
    EXPECT_THAT(answer, ::fencegate::testing::IsOk());
    if (!answer.ok()) return 0;
    EXPECT_EQ(answer->result_case(), ::fencegate::v1::LockResult::kAcquire)
        << answer->ShortDebugString();
    EXPECT_TRUE(answer->acquire().acquired()) << answer->ShortDebugString();
    return answer->acquire().token();
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  std::unique_ptr<SqliteLockStore> store_;
  std::unique_ptr<testing::FaultyLockStore> faulty_;
  std::shared_ptr<LockManager> manager_;
  int protocol_errors_before_ = 0;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_TESTS_UNIT_LOCK_SESSION_FIXTURE_H_
