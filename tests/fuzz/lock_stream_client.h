// LockStreamClient: the lock_service fuzz target's client end of one
// lock-service Session stream (lockservice/core/lock_session.h), on the fake
// transport of tests/testing/stream_harness.h (which counts any breach of
// the transport's rules): the target sends its calls as stream messages
// and takes the answers and pushes, message by message, in the order the
// session wrote them, which is the order the manager decided them
// (answers before pushes within a message). Also reads the answers back
// into the manager's results, for the model to judge.
//
// Thread safety: as StreamHarness; the target drives it from one thread.
#ifndef FENCEGATE_TESTS_FUZZ_LOCK_STREAM_CLIENT_H_
#define FENCEGATE_TESTS_FUZZ_LOCK_STREAM_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/core/token_signer.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/lock_manager.h"
#include "tests/testing/stream_harness.h"

namespace fencegate::fuzz {

class LockStreamClient final : public testing::StreamHarness {
 public:
  LockStreamClient(std::shared_ptr<lockservice::LockManager> manager,
                   const TokenSigner* signer);
  // Cancels the stream if it is still open.
  ~LockStreamClient() override { Stop(); }

  // Sends one message carrying `call`. False if the session is not reading
  // (it never stops while its client takes every message, as this one does).
  bool Send(const fencegate::v1::LockCall& call);
  // Every message written since the last call, each taken (so the session
  // goes on writing), in order.
  std::vector<fencegate::v1::LockSessionResponse> TakeMessages();

 private:
  bool Take(const std::string& bytes) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<fencegate::v1::LockSessionResponse> messages_ ABSL_GUARDED_BY(mu_);
};

// A stream's answer as the manager's result it carries (an error answer as
// its status); fails the input if the answer is of another call's kind.
absl::StatusOr<lockservice::AcquireResult> AcquireResultOf(
    const fencegate::v1::LockResult& r);
absl::StatusOr<lockservice::RenewResult> RenewResultOf(
    const fencegate::v1::LockResult& r);
absl::StatusOr<lockservice::ReleaseResult> ReleaseResultOf(
    const fencegate::v1::LockResult& r);
absl::StatusOr<lockservice::ResourceInfo> DescribeResultOf(
    const fencegate::v1::LockResult& r);

}  // namespace fencegate::fuzz

#endif  // FENCEGATE_TESTS_FUZZ_LOCK_STREAM_CLIENT_H_
