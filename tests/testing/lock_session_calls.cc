#include "tests/testing/lock_session_calls.h"

#include "common/base/errors.h"

namespace fencegate::testing {

namespace v1 = ::fencegate::v1;

v1::LockCall AcquireCall(uint64_t request_id, const std::string& resource,
                         const std::string& holder, absl::Duration ttl,
                         absl::Duration wait, const std::string& idempotency_key) {
  v1::LockCall call;
  call.set_request_id(request_id);
  v1::AcquireRequest* acquire = call.mutable_acquire();
  acquire->set_resource(resource);
  acquire->set_holder(holder);
  acquire->set_ttl_ms(absl::ToInt64Milliseconds(ttl));
  acquire->set_wait_ms(absl::ToInt64Milliseconds(wait));
  acquire->set_request_id(idempotency_key);
  return call;
}

v1::LockCall RenewCall(uint64_t request_id, const std::string& resource, uint64_t token,
                       absl::Duration ttl) {
  v1::LockCall call;
  call.set_request_id(request_id);
  v1::RenewRequest* renew = call.mutable_renew();
  renew->set_resource(resource);
  renew->set_token(token);
  renew->set_ttl_ms(absl::ToInt64Milliseconds(ttl));
  return call;
}

v1::LockCall ReleaseCall(uint64_t request_id, const std::string& resource,
                         uint64_t token) {
  v1::LockCall call;
  call.set_request_id(request_id);
  call.mutable_release()->set_resource(resource);
  call.mutable_release()->set_token(token);
  return call;
}

v1::LockCall DescribeCall(uint64_t request_id, const std::string& resource) {
  v1::LockCall call;
  call.set_request_id(request_id);
  call.mutable_describe()->set_resource(resource);
  return call;
}

std::string EncodeLockCalls(const std::vector<v1::LockCall>& calls) {
  v1::LockSessionRequest message;
  for (const v1::LockCall& call : calls) *message.add_calls() = call;
  return message.SerializeAsString();
}

absl::StatusOr<v1::LockSessionResponse> DecodeLockResponse(const std::string& bytes) {
  v1::LockSessionResponse message;
  if (!message.ParseFromString(bytes)) {
    return absl::InternalError("a LockSessionResponse does not parse");
  }
  return message;
}

absl::Status StatusOf(const v1::LockResult& result) {
  if (result.result_case() != v1::LockResult::kError) return absl::OkStatus();
  return FromRpcStatus(result.error());
}

}  // namespace fencegate::testing
