// FaultyStorageBackend: wraps a gateway StorageBackend to fail or hold chosen
// commits, as a disk or fsync failure would, and to record every op it
// applied. For proving that nothing uncommitted is acknowledged and for
// forcing interleavings without timing: a held commit parks the gateway's
// writer thread, so requests submitted meanwhile are all in flight together
// and join the next batch.
//
// Thread safety: like StorageBackend (one write-path caller). The knobs are
// atomic, and applied() is guarded, so a test may use them while the
// writer thread runs.
#ifndef FENCEGATE_TESTS_TESTING_FAULTY_STORAGE_BACKEND_H_
#define FENCEGATE_TESTS_TESTING_FAULTY_STORAGE_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gateway/storage_backend.h"

namespace fencegate::testing {

class FaultyStorageBackend final : public gateway::StorageBackend {
 public:
  // One Apply() seen: the op's token and what the backend decided (or that
  // it failed, `ok` false).
  struct Applied {
    uint64_t token = 0;
    gateway::Outcome outcome = gateway::Outcome::kAccepted;
    bool ok = true;
  };

  explicit FaultyStorageBackend(gateway::StorageBackend* inner) : inner_(inner) {}

  // The n-th CommitBatch() to start from now on (1 = the next) fails after
  // rolling the batch back, so nothing of it is applied.
  void FailNthCommit(int n) { fail_at_ = commits_.load() + n; }
  // The next CommitBatch() notifies `entered`, then waits for `proceed`
  // before it commits (or fails).
  void HoldNextCommit(absl::Notification* entered, absl::Notification* proceed) {
    proceed_ = proceed;
    entered_ = entered;
  }
  // CommitBatch() calls started so far.
  int commits() const { return commits_.load(); }
  std::vector<Applied> applied() {
    absl::MutexLock lock(&mu_);
    return applied_;
  }

  absl::Status BeginBatch(absl::Span<const absl::string_view> resources) override {
    return inner_->BeginBatch(resources);
  }

  absl::Status Apply(const gateway::FencedOp& op, gateway::OpResult* result) override {
    absl::Status status = inner_->Apply(op, result);
    absl::MutexLock lock(&mu_);
    applied_.push_back(Applied{op.token, result->outcome, status.ok()});
    return status;
  }

  absl::Status CommitBatch() override {
    const int n = ++commits_;
    if (absl::Notification* entered = entered_.exchange(nullptr)) {
      entered->Notify();
      proceed_.exchange(nullptr)->WaitForNotification();
    }
    if (n == fail_at_.load()) {
      inner_->AbortBatch();
      return absl::InternalError("injected commit failure");
    }
    return inner_->CommitBatch();
  }

  void AbortBatch() override { inner_->AbortBatch(); }
  bool SoleFenceWriter() const override { return inner_->SoleFenceWriter(); }

  absl::StatusOr<gateway::ReadResult> ReadCommitted(absl::string_view resource,
                                                    absl::string_view key) override {
    return inner_->ReadCommitted(resource, key);
  }
  absl::StatusOr<gateway::ListPage> ListCommitted(absl::string_view resource,
                                                  absl::string_view after_key,
                                                  size_t limit) override {
    return inner_->ListCommitted(resource, after_key, limit);
  }
  absl::StatusOr<gateway::ResourceStats> DescribeCommitted(
      absl::string_view resource) override {
    return inner_->DescribeCommitted(resource);
  }

 private:
  gateway::StorageBackend* const inner_;
  std::atomic<int> commits_{0};
  std::atomic<int> fail_at_{-1};
  std::atomic<absl::Notification*> entered_{nullptr};
  std::atomic<absl::Notification*> proceed_{nullptr};
  absl::Mutex mu_;
  std::vector<Applied> applied_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_FAULTY_STORAGE_BACKEND_H_
