#include "tests/integration/session_bad_requests.h"

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/grpc_status.h"
#include "fencegate/v1/gateway.pb.h"
#include "fencegate/v1/lock.pb.h"

namespace fencegate::conformance {
namespace {

namespace v1 = ::fencegate::v1;

// The GatewayCall field that carries each method's request.
int RequestField(const std::string& method) {
  if (method == "/fencegate.v1.Gateway/Write") return v1::GatewayCall::kWriteFieldNumber;
  if (method == "/fencegate.v1.Gateway/MultiWrite") {
    return v1::GatewayCall::kMultiWriteFieldNumber;
  }
  if (method == "/fencegate.v1.Gateway/Read") return v1::GatewayCall::kReadFieldNumber;
  if (method == "/fencegate.v1.Gateway/Fence") return v1::GatewayCall::kFenceFieldNumber;
  if (method == "/fencegate.v1.LockService/Acquire") return v1::LockCall::kAcquireFieldNumber;
  if (method == "/fencegate.v1.LockService/Renew") return v1::LockCall::kRenewFieldNumber;
  if (method == "/fencegate.v1.LockService/Release") return v1::LockCall::kReleaseFieldNumber;
  if (method == "/fencegate.v1.LockService/Describe") {
    return v1::LockCall::kDescribeFieldNumber;
  }
  return 0;
}

// Both calls have request_id = 1, and both requests calls = 1.
static_assert(v1::GatewayCall::kRequestIdFieldNumber == v1::LockCall::kRequestIdFieldNumber);
static_assert(v1::GatewaySessionRequest::kCallsFieldNumber ==
              v1::LockSessionRequest::kCallsFieldNumber);

std::string Delimited(int field, const std::string& bytes) {
  return Tag(field, 2) + Varint(bytes.size()) + bytes;
}

}  // namespace

bool OnTheStream(const BadRequest& c) {
  return RequestField(c.method) != 0 && c.code != grpc::StatusCode::RESOURCE_EXHAUSTED;
}

std::string CallOf(const BadRequest& c, uint64_t request_id) {
  return Tag(v1::GatewayCall::kRequestIdFieldNumber, 0) + Varint(request_id) +
         Delimited(RequestField(c.method), c.bytes);
}

std::string MessageOf(const std::vector<std::string>& calls) {
  std::string message;
  for (const std::string& call : calls) {
    message += Delimited(v1::GatewaySessionRequest::kCallsFieldNumber, call);
  }
  return message;
}

absl::StatusOr<std::map<uint64_t, testing::RawReply>> LockAnswersOf(
    const std::vector<std::string>& messages) {
  std::map<uint64_t, testing::RawReply> answers;
  for (const std::string& bytes : messages) {
    v1::LockSessionResponse message;
    if (!message.ParseFromString(bytes)) {
      return absl::InternalError("a LockSessionResponse does not parse");
    }
    if (message.lost_size() > 0) {
      return absl::InternalError(absl::StrCat("a lease was pushed as lost: ",
                                              message.lost(0).ShortDebugString()));
    }
    for (const v1::LockResult& result : message.results()) {
      testing::RawReply reply;
      switch (result.result_case()) {
        case v1::LockResult::kAcquire:
          reply.response = result.acquire().SerializeAsString();
          break;
        case v1::LockResult::kRenew:
          reply.response = result.renew().SerializeAsString();
          break;
        case v1::LockResult::kRelease:
          reply.response = result.release().SerializeAsString();
          break;
        case v1::LockResult::kDescribe:
          reply.response = result.describe().SerializeAsString();
          break;
        case v1::LockResult::kError:
          reply.status = ToGrpcStatus(FromRpcStatus(result.error()));
          break;
        case v1::LockResult::RESULT_NOT_SET:
          return absl::InternalError(
              absl::StrCat("request ", result.request_id(), " got an empty answer"));
      }
      if (!answers.emplace(result.request_id(), std::move(reply)).second) {
        return absl::InternalError(
            absl::StrCat("request ", result.request_id(), " was answered twice"));
      }
    }
  }
  return answers;
}

absl::StatusOr<std::map<uint64_t, testing::RawReply>> AnswersOf(
    const std::vector<std::string>& messages) {
  std::map<uint64_t, testing::RawReply> answers;
  for (const std::string& bytes : messages) {
    v1::GatewaySessionResponse message;
    if (!message.ParseFromString(bytes)) {
      return absl::InternalError("a GatewaySessionResponse does not parse");
    }
    for (const v1::GatewayResult& result : message.results()) {
      testing::RawReply reply;
      switch (result.result_case()) {
        case v1::GatewayResult::kWrite:
          reply.response = result.write().SerializeAsString();
          break;
        case v1::GatewayResult::kMultiWrite:
          reply.response = result.multi_write().SerializeAsString();
          break;
        case v1::GatewayResult::kRead:
          reply.response = result.read().SerializeAsString();
          break;
        case v1::GatewayResult::kFence:
          reply.response = result.fence().SerializeAsString();
          break;
        case v1::GatewayResult::kError:
          reply.status = ToGrpcStatus(FromRpcStatus(result.error()));
          break;
        case v1::GatewayResult::RESULT_NOT_SET:
          return absl::InternalError(
              absl::StrCat("request ", result.request_id(), " got an empty answer"));
      }
      if (!answers.emplace(result.request_id(), std::move(reply)).second) {
        return absl::InternalError(
            absl::StrCat("request ", result.request_id(), " was answered twice"));
      }
    }
  }
  return answers;
}

}  // namespace fencegate::conformance
