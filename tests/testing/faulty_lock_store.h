// FaultyLockStore: wraps a LockStore and fails chosen Commit() calls, as a
// disk or fsync failure would, without applying them. Optionally fails
// Load() too. For proving that no uncommitted token leaves the server.
//
// Thread safety: like LockStore (one caller at a time); the knobs are atomic
// so a test may set them while the manager's writer thread runs.
#ifndef FENCEGATE_TESTS_TESTING_FAULTY_LOCK_STORE_H_
#define FENCEGATE_TESTS_TESTING_FAULTY_LOCK_STORE_H_

#include <atomic>

#include "absl/synchronization/notification.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::testing {

class FaultyLockStore final : public lockservice::LockStore {
 public:
  explicit FaultyLockStore(lockservice::LockStore* inner) : inner_(inner) {}

  // The n-th Commit() from now on (1 = the next one) fails.
  void FailNthCommit(int n) { fail_at_ = commits_.load() + n; }
  void FailLoads(bool fail) { fail_loads_ = fail; }
  // The next Commit() notifies `entered`, then waits for `proceed` before
  // it succeeds or fails: a test can act while a batch is at the store.
  void HoldNextCommit(absl::Notification* entered, absl::Notification* proceed) {
    entered_ = entered;
    proceed_ = proceed;
  }
  int commits() const { return commits_.load(); }

  absl::StatusOr<lockservice::LockStoreState> Load() override {
    if (fail_loads_) return absl::DataLossError("injected Load failure");
    return inner_->Load();
  }
  absl::Status LoadInto(lockservice::LoadSink& sink) override {
    if (fail_loads_) return absl::DataLossError("injected Load failure");
    return inner_->LoadInto(sink);
  }

  absl::Status Commit(const lockservice::LockStoreBatch& batch) override {
    if (absl::Notification* entered = entered_.exchange(nullptr)) {
      entered->Notify();
      proceed_.exchange(nullptr)->WaitForNotification();
    }
    if (++commits_ == fail_at_) return absl::InternalError("injected commit failure");
    return inner_->Commit(batch);
  }

  absl::StatusOr<std::vector<lockservice::FencePosition>> ScanFencePositions(
      uint64_t after, size_t limit) override {
    return inner_->ScanFencePositions(after, limit);
  }

 private:
  lockservice::LockStore* const inner_;
  std::atomic<int> commits_{0};
  std::atomic<int> fail_at_{-1};
  std::atomic<bool> fail_loads_{false};
  std::atomic<absl::Notification*> entered_{nullptr};
  std::atomic<absl::Notification*> proceed_{nullptr};
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_FAULTY_LOCK_STORE_H_
