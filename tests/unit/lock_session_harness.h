// LockSessionHarness: a lock-service LockSession
// (lockservice/core/lock_session.h) on the fake transport of
// tests/testing/stream_harness.h, which a test drives as a client would,
// decoding what the session writes: the answers (LockResult) and the pushes
// (LeaseLost), and the order they came in.
//
// Thread safety: as StreamHarness.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_SESSION_HARNESS_H_
#define FENCEGATE_TESTS_UNIT_LOCK_SESSION_HARNESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_session.h"
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/stream_harness.h"

namespace fencegate::lockservice {

class LockSessionHarness final : public testing::StreamHarness {
 public:
  LockSessionHarness(std::shared_ptr<LockManager> manager,
                     StreamLimits limits = StreamLimits(),
                     const TokenSigner* signer = nullptr,
                     absl::StatusOr<Caller> caller = Caller());
  ~LockSessionHarness() override { Stop(); }

  using StreamHarness::Send;
  void Send(const std::vector<fencegate::v1::LockCall>& calls) {
    Send(testing::EncodeLockCalls(calls));
  }

  // The answer to `request_id` (the first, if several came); takes written
  // messages meanwhile. DEADLINE_EXCEEDED if none comes in 60 s.
  absl::StatusOr<fencegate::v1::LockResult> WaitForAnswer(uint64_t request_id);
  // Its status: OK for a response.
  absl::Status AnswerStatus(uint64_t request_id);
  std::vector<fencegate::v1::LockResult> AnswersTo(uint64_t request_id);
  std::vector<fencegate::v1::LockResult> answers();
  // The push that `token` was lost; DEADLINE_EXCEEDED after 60 s.
  absl::StatusOr<fencegate::v1::LeaseLost> WaitForLost(uint64_t token);
  std::vector<fencegate::v1::LeaseLost> lost();
  // Everything taken, in order: "answer <request_id>", "lost <token>", and
  // "|" between messages.
  std::vector<std::string> sequence();

 private:
  bool Take(const std::string& bytes) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<fencegate::v1::LockResult> answers_ ABSL_GUARDED_BY(mu_);
  std::vector<fencegate::v1::LeaseLost> lost_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> sequence_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_TESTS_UNIT_LOCK_SESSION_HARNESS_H_
