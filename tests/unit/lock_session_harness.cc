#include "tests/unit/lock_session_harness.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

LockSessionHarness::LockSessionHarness(std::shared_ptr<LockManager> manager,
                                       StreamLimits limits, const TokenSigner* signer,
                                       absl::StatusOr<Caller> caller) {
  Attach(LockSession::Start(std::move(manager), signer, std::move(caller), limits, this));
}

bool LockSessionHarness::Take(const std::string& bytes) {
  absl::StatusOr<v1::LockSessionResponse> message = testing::DecodeLockResponse(bytes);
  if (!message.ok()) return false;
  if (!sequence_.empty()) sequence_.push_back("|");
  for (const v1::LockResult& r : message->results()) {
    answers_.push_back(r);
    sequence_.push_back(absl::StrCat("answer ", r.request_id()));
  }
  for (const v1::LeaseLost& l : message->lost()) {
    lost_.push_back(l);
    sequence_.push_back(absl::StrCat("lost ", l.token()));
  }
  return true;
}

absl::StatusOr<v1::LockResult> LockSessionHarness::WaitForAnswer(uint64_t request_id) {
  auto answered = [this, request_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::LockResult& a : answers_) {
      if (a.request_id() == request_id) return true;
    }
    return false;
  };
  if (!PumpUntil(answered))
    return absl::DeadlineExceededError("no answer within the safety net");
  return AnswersTo(request_id).front();
}

absl::Status LockSessionHarness::AnswerStatus(uint64_t request_id) {
  absl::StatusOr<v1::LockResult> answer = WaitForAnswer(request_id);
  if (!answer.ok()) return answer.status();
  return testing::StatusOf(*answer);
}

std::vector<v1::LockResult> LockSessionHarness::AnswersTo(uint64_t request_id) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::LockResult> out;
  for (const v1::LockResult& a : answers_) {
    if (a.request_id() == request_id) out.push_back(a);
  }
  return out;
}

std::vector<v1::LockResult> LockSessionHarness::answers() {
  absl::MutexLock lock(&mu_);
  return answers_;
}

absl::StatusOr<v1::LeaseLost> LockSessionHarness::WaitForLost(uint64_t token) {
  auto pushed = [this, token]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::LeaseLost& l : lost_) {
      if (l.token() == token) return true;
    }
    return false;
  };
  if (!PumpUntil(pushed))
    return absl::DeadlineExceededError("no push within the safety net");
  absl::MutexLock lock(&mu_);
  for (const v1::LeaseLost& l : lost_) {
    if (l.token() == token) return l;
  }
  return absl::InternalError("unreachable");
}

std::vector<v1::LeaseLost> LockSessionHarness::lost() {
  absl::MutexLock lock(&mu_);
  return lost_;
}

std::vector<std::string> LockSessionHarness::sequence() {
  absl::MutexLock lock(&mu_);
  return sequence_;
}

}  // namespace fencegate::lockservice
