// A FencedStore on a real storage backend (a SQLite file in a temp dir, or
// a schema on a PostgreSQL server of the test's own: gateway_test_backends.h),
// behind a FaultyStorageBackend, with helpers that make a request and wait
// for its reply. No test sleeps: replies are awaited on notifications, and
// the writer thread is parked inside a held commit to line requests up.
//
// GatewayStoreTest runs on SQLite; GatewayBackendTest is the same fixture
// for TEST_P over every backend (INSTANTIATE_TEST_SUITE_P with AllBackends()).
#ifndef FENCEGATE_TESTS_UNIT_GATEWAY_STORE_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_GATEWAY_STORE_FIXTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "gateway/fenced_store.h"
#include "gateway/storage_backend.h"
#include "gtest/gtest.h"
#include "tests/testing/error_info.h"
#include "tests/testing/faulty_storage_backend.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/fenced_store_calls.h"
#include "tests/unit/gateway_test_backends.h"

namespace fencegate::gateway {

using ::fencegate::testing::InfoOf;

class GatewayStoreTest : public ::testing::Test {
 protected:
  explicit GatewayStoreTest(BackendKind kind = BackendKind::kSqlite) : kind_(kind) {}

  void SetUp() override {
    auto backend = TestBackend::Create(kind_);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *std::move(backend);
    Open();
  }
  void TearDown() override { ReleaseWriter(); }

  void Open() {
    auto storage = backend_->Open();
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
    faulty_ = std::make_unique<testing::FaultyStorageBackend>(storage_.get());
    store_ = std::make_unique<FencedStore>(faulty_.get(), limits_, signer_.get());
  }
  // Closes everything and opens the same database again, as a restart would.
  void Reopen() {
    store_.reset();
    faulty_.reset();
    storage_.reset();
    Open();
  }

  // Parks the writer thread inside the commit of a Fence on "blocker" and
  // returns once it is there. Requests made until ReleaseWriter() are all
  // in flight at once and join the next batch, in the order made.
  void HoldWriter() {
    held_entered_ = std::make_unique<absl::Notification>();
    held_proceed_ = std::make_unique<absl::Notification>();
    faulty_->HoldNextCommit(held_entered_.get(), held_proceed_.get());
    blocker_ = StartFence("blocker", 1);
    held_entered_->WaitForNotification();
  }
  // Parks the writer inside the commit of whatever is submitted next.
  void HoldNextCommit() {
    held_entered_ = std::make_unique<absl::Notification>();
    held_proceed_ = std::make_unique<absl::Notification>();
    faulty_->HoldNextCommit(held_entered_.get(), held_proceed_.get());
  }
  void WaitUntilHeld() { held_entered_->WaitForNotification(); }
  void ReleaseWriter() {
    if (held_proceed_ && !held_proceed_->HasBeenNotified()) held_proceed_->Notify();
  }

  // `on`: another store than store_ (e.g. a second gateway's).
  ReplyPtr<WriteResult> StartWrite(absl::string_view resource, uint64_t token,
                                   const std::vector<M>& mutations, bool multi,
                                   FencedStore* on = nullptr, const Claim& claim = {}) {
    return gateway::StartWrite(on != nullptr ? *on : *store_, resource, token, mutations,
                               multi, claim);
  }
  ReplyPtr<WriteResult> StartPut(absl::string_view resource, uint64_t token,
                                 std::string key, std::string value,
                                 FencedStore* on = nullptr) {
    return StartWrite(resource, token, {Put(std::move(key), std::move(value))}, false, on);
  }
  absl::StatusOr<WriteResult> Write(absl::string_view resource, uint64_t token, M m,
                                    const Claim& claim = {}) {
    return StartWrite(resource, token, {std::move(m)}, false, nullptr, claim)->Wait();
  }
  absl::StatusOr<WriteResult> MultiWrite(absl::string_view resource, uint64_t token,
                                         const std::vector<M>& mutations,
                                         const Claim& claim = {}) {
    return StartWrite(resource, token, mutations, true, nullptr, claim)->Wait();
  }

  ReplyPtr<ReadResult> StartRead(absl::string_view resource, absl::string_view key,
                                 uint64_t token, const Claim& claim = {}) {
    return gateway::StartRead(*store_, resource, key, token, claim);
  }
  absl::StatusOr<ReadResult> Read(absl::string_view resource, absl::string_view key,
                                  uint64_t token = 0, const Claim& claim = {}) {
    return StartRead(resource, key, token, claim)->Wait();
  }

  ReplyPtr<FenceResult> StartFence(absl::string_view resource, uint64_t token,
                                   const Claim& claim = {}) {
    return gateway::StartFence(*store_, resource, token, claim);
  }
  absl::StatusOr<FenceResult> Fence(absl::string_view resource, uint64_t token,
                                    const Claim& claim = {}) {
    return StartFence(resource, token, claim)->Wait();
  }

  // The committed fence of `resource` (0 when unknown or on error).
  uint64_t FenceOf(absl::string_view resource) {
    absl::StatusOr<ResourceStats> stats = store_->Describe(resource);
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->max_token : 0;
  }
  // The committed value of `key`, or "<absent>".
  std::string ValueOf(absl::string_view resource, absl::string_view key) {
    absl::StatusOr<ReadResult> read = Read(resource, key);
    EXPECT_TRUE(read.ok()) << read.status();
    if (!read.ok() || !read->found) return "<absent>";
    return read->value;
  }

  const BackendKind kind_;
  std::unique_ptr<TestBackend> backend_;
  GatewayLimits limits_;
  std::unique_ptr<TokenSigner> signer_;  // null: unsigned tokens; set, then Reopen()
  // Before the store: a held commit may still use them while it shuts down.
  std::unique_ptr<absl::Notification> held_entered_;
  std::unique_ptr<absl::Notification> held_proceed_;
  std::unique_ptr<StorageBackend> storage_;
  std::unique_ptr<testing::FaultyStorageBackend> faulty_;
  std::unique_ptr<FencedStore> store_;
  ReplyPtr<FenceResult> blocker_;
};

// The fixture on the backend of the TEST_P instance.
class GatewayBackendTest : public GatewayStoreTest,
                           public ::testing::WithParamInterface<BackendKind> {
 protected:
  GatewayBackendTest() : GatewayStoreTest(GetParam()) {}
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_GATEWAY_STORE_FIXTURE_H_
