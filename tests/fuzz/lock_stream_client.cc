#include "tests/fuzz/lock_stream_client.h"

#include <utility>

#include "common/base/errors.h"
#include "lockservice/core/lock_session.h"
#include "tests/fuzz/fuzz_support.h"

namespace fencegate::fuzz {

namespace v1 = ::fencegate::v1;

LockStreamClient::LockStreamClient(std::shared_ptr<lockservice::LockManager> manager,
                                   const TokenSigner* signer) {
  Attach(lockservice::LockSession::Start(std::move(manager), signer,
                                         lockservice::Caller(), StreamLimits(), this));
}

bool LockStreamClient::Send(const v1::LockCall& call) {
  if (!ReadPending()) return false;
  v1::LockSessionRequest message;
  *message.add_calls() = call;
  StreamHarness::Send(message.SerializeAsString());
  return true;
}

std::vector<v1::LockSessionResponse> LockStreamClient::TakeMessages() {
  TakeAll();
  absl::MutexLock lock(&mu_);
  return std::exchange(messages_, {});
}

bool LockStreamClient::Take(const std::string& bytes) {
  v1::LockSessionResponse message;
  if (!message.ParseFromString(bytes)) return false;
  messages_.push_back(std::move(message));
  return true;
}

absl::StatusOr<lockservice::AcquireResult> AcquireResultOf(const v1::LockResult& r) {
  if (r.result_case() == v1::LockResult::kError) return FromRpcStatus(r.error());
  FUZZ_CHECK(r.result_case() == v1::LockResult::kAcquire, "not an Acquire's answer");
  const v1::AcquireResponse& a = r.acquire();
  lockservice::AcquireResult result;
  result.acquired = a.acquired();
  result.token = a.token();
  result.ttl = absl::Milliseconds(a.ttl_ms());
  result.hold_count = a.hold_count();
  result.reason = a.reason() == v1::AcquireResponse::HELD
                      ? lockservice::NotAcquiredReason::kHeld
                  : a.reason() == v1::AcquireResponse::LOCK_DELAY
                      ? lockservice::NotAcquiredReason::kLockDelay
                      : lockservice::NotAcquiredReason::kNone;
  result.holder_token = a.holder_token();
  result.retry_after = absl::Milliseconds(a.retry_after_ms());
  return result;
}
absl::StatusOr<lockservice::RenewResult> RenewResultOf(const v1::LockResult& r) {
  if (r.result_case() == v1::LockResult::kError) return FromRpcStatus(r.error());
  FUZZ_CHECK(r.result_case() == v1::LockResult::kRenew, "not a Renew's answer");
  return lockservice::RenewResult{absl::Milliseconds(r.renew().ttl_ms())};
}
absl::StatusOr<lockservice::ReleaseResult> ReleaseResultOf(const v1::LockResult& r) {
  if (r.result_case() == v1::LockResult::kError) return FromRpcStatus(r.error());
  FUZZ_CHECK(r.result_case() == v1::LockResult::kRelease, "not a Release's answer");
  return lockservice::ReleaseResult{r.release().hold_count()};
}
absl::StatusOr<lockservice::ResourceInfo> DescribeResultOf(const v1::LockResult& r) {
  if (r.result_case() == v1::LockResult::kError) return FromRpcStatus(r.error());
  FUZZ_CHECK(r.result_case() == v1::LockResult::kDescribe, "not a Describe's answer");
  const v1::DescribeResponse& d = r.describe();
  lockservice::ResourceInfo info;
  info.held = d.held();
  info.holder = d.holder();
  info.token = d.token();
  info.remaining = absl::Milliseconds(d.remaining_ms());
  info.hold_count = d.hold_count();
  info.waiters = d.waiters();
  info.lock_delay_remaining = absl::Milliseconds(d.lock_delay_remaining_ms());
  return info;
}

}  // namespace fencegate::fuzz
