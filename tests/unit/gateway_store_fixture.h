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

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gateway/fenced_store.h"
#include "gateway/storage_backend.h"
#include "gtest/gtest.h"
#include "tests/testing/faulty_storage_backend.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/gateway_test_backends.h"

namespace fencegate::gateway {

// One reply, filled by the store's callback on whatever thread it runs. It
// also owns the bytes the request's string_views point at.
template <typename T>
class Reply {
 public:
  absl::string_view Keep(absl::string_view s) {
    kept_.emplace_back(s);
    return kept_.back();
  }
  void Set(absl::StatusOr<T> result) {
    absl::MutexLock lock(&mu_);
    result_ = std::move(result);
    arrived_.Notify();
  }
  bool arrived() const { return arrived_.HasBeenNotified(); }
  // Waits for the reply; a safety net, not a timing assumption.
  absl::StatusOr<T> Wait() {
    if (!arrived_.WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("no reply within 60s");
    }
    absl::MutexLock lock(&mu_);
    return *result_;
  }

 private:
  std::deque<std::string> kept_;
  absl::Notification arrived_;
  absl::Mutex mu_;
  std::optional<absl::StatusOr<T>> result_;
};

template <typename T>
using ReplyPtr = std::shared_ptr<Reply<T>>;

// A mutation that owns its bytes.
struct M {
  Mutation::Kind kind = Mutation::Kind::kUnset;
  std::string key;
  std::string value;
  std::optional<uint64_t> expected;
};
inline M Put(std::string key, std::string value,
             std::optional<uint64_t> expected = std::nullopt) {
  return M{Mutation::Kind::kPut, std::move(key), std::move(value), expected};
}
inline M Del(std::string key, std::optional<uint64_t> expected = std::nullopt) {
  return M{Mutation::Kind::kDelete, std::move(key), "", expected};
}
inline M Unset(std::string key) {
  return M{Mutation::Kind::kUnset, std::move(key), "", std::nullopt};
}

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
    store_ = std::make_unique<FencedStore>(faulty_.get(), limits_);
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
                                   FencedStore* on = nullptr) {
    auto reply = std::make_shared<Reply<WriteResult>>();
    WriteArgs args;
    args.resource = reply->Keep(resource);
    args.token = token;
    args.multi = multi;
    for (const M& m : mutations) {
      Mutation& out = args.mutations.emplace_back();
      out.kind = m.kind;
      out.key = reply->Keep(m.key);
      out.value = reply->Keep(m.value);
      out.expected_version = m.expected;
    }
    (on != nullptr ? on : store_.get())
        ->Write(std::move(args),
                [reply](absl::StatusOr<WriteResult> r) { reply->Set(std::move(r)); });
    return reply;
  }
  ReplyPtr<WriteResult> StartPut(absl::string_view resource, uint64_t token,
                                 std::string key, std::string value,
                                 FencedStore* on = nullptr) {
    return StartWrite(resource, token, {Put(std::move(key), std::move(value))}, false, on);
  }
  absl::StatusOr<WriteResult> Write(absl::string_view resource, uint64_t token, M m) {
    return StartWrite(resource, token, {std::move(m)}, false)->Wait();
  }
  absl::StatusOr<WriteResult> MultiWrite(absl::string_view resource, uint64_t token,
                                         const std::vector<M>& mutations) {
    return StartWrite(resource, token, mutations, true)->Wait();
  }

  ReplyPtr<ReadResult> StartRead(absl::string_view resource, absl::string_view key,
                                 uint64_t token) {
    auto reply = std::make_shared<Reply<ReadResult>>();
    ReadArgs args{reply->Keep(resource), reply->Keep(key), token, {}};
    store_->Read(args, [reply](absl::StatusOr<ReadResult> r) { reply->Set(std::move(r)); });
    return reply;
  }
  absl::StatusOr<ReadResult> Read(absl::string_view resource, absl::string_view key,
                                  uint64_t token = 0) {
    return StartRead(resource, key, token)->Wait();
  }

  ReplyPtr<FenceResult> StartFence(absl::string_view resource, uint64_t token) {
    auto reply = std::make_shared<Reply<FenceResult>>();
    FenceArgs args{reply->Keep(resource), token, {}};
    store_->Fence(args, [reply](absl::StatusOr<FenceResult> r) { reply->Set(std::move(r)); });
    return reply;
  }
  absl::StatusOr<FenceResult> Fence(absl::string_view resource, uint64_t token) {
    return StartFence(resource, token)->Wait();
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
