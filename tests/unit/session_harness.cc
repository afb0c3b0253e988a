#include "tests/unit/session_harness.h"

#include <utility>

#include "common/base/errors.h"

namespace fencegate::gateway {

// ---------------------------------------------------------------- messages

v1::GatewayCall Call(uint64_t request_id, const v1::WriteRequest& write) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_write() = write;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::MultiWriteRequest& write) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_multi_write() = write;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::ReadRequest& read) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_read() = read;
  return call;
}

v1::GatewayCall Call(uint64_t request_id, const v1::FenceRequest& fence) {
  v1::GatewayCall call;
  call.set_request_id(request_id);
  *call.mutable_fence() = fence;
  return call;
}

v1::WriteRequest PutRequest(const std::string& resource, uint64_t token,
                            const std::string& key, const std::string& value) {
  v1::WriteRequest request;
  request.set_resource(resource);
  request.set_token(token);
  request.mutable_mutation()->set_key(key);
  request.mutable_mutation()->set_value(value);
  return request;
}

v1::ReadRequest ReadRequest(const std::string& resource, const std::string& key,
                            uint64_t token) {
  v1::ReadRequest request;
  request.set_resource(resource);
  request.set_key(key);
  request.set_token(token);
  return request;
}

v1::FenceRequest FenceRequest(const std::string& resource, uint64_t token) {
  v1::FenceRequest request;
  request.set_resource(resource);
  request.set_token(token);
  return request;
}

std::string Encode(const std::vector<v1::GatewayCall>& calls) {
  v1::GatewaySessionRequest message;
  for (const v1::GatewayCall& call : calls) *message.add_calls() = call;
  return message.SerializeAsString();
}

absl::StatusOr<std::vector<v1::GatewayResult>> Decode(const std::string& bytes) {
  v1::GatewaySessionResponse message;
  if (!message.ParseFromString(bytes)) {
    return absl::InternalError("a GatewaySessionResponse does not parse");
  }
  return std::vector<v1::GatewayResult>(message.results().begin(), message.results().end());
}

absl::Status StatusOf(const v1::GatewayResult& result) {
  if (result.result_case() != v1::GatewayResult::kError) return absl::OkStatus();
  return FromRpcStatus(result.error());
}

// ----------------------------------------------------------------- harness

SessionHarness::SessionHarness(FencedStore* store, StreamLimits limits) {
  Attach(Session::Start(store, limits, this));
}

bool SessionHarness::Take(const std::string& bytes) {
  absl::StatusOr<std::vector<v1::GatewayResult>> results = Decode(bytes);
  if (!results.ok()) return false;
  for (v1::GatewayResult& r : *results) answers_.push_back(std::move(r));
  return true;
}

absl::StatusOr<v1::GatewayResult> SessionHarness::WaitForAnswer(uint64_t request_id) {
  auto answered = [this, request_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const v1::GatewayResult& a : answers_) {
      if (a.request_id() == request_id) return true;
    }
    return false;
  };
  if (!PumpUntil(answered)) {
    return absl::DeadlineExceededError("no answer within the safety net");
  }
  return AnswersTo(request_id).front();
}

std::vector<v1::GatewayResult> SessionHarness::AnswersTo(uint64_t request_id) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::GatewayResult> out;
  for (const v1::GatewayResult& a : answers_) {
    if (a.request_id() == request_id) out.push_back(a);
  }
  return out;
}

std::vector<v1::GatewayResult> SessionHarness::answers() {
  absl::MutexLock lock(&mu_);
  return answers_;
}

}  // namespace fencegate::gateway
