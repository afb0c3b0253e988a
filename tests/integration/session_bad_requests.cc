#include "tests/integration/session_bad_requests.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/errors.pb.h"
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
  if (method == "/fencegate.v1.LockService/Campaign") {
    return v1::LockCall::kCampaignFieldNumber;
  }
  if (method == "/fencegate.v1.LockService/Proclaim") {
    return v1::LockCall::kProclaimFieldNumber;
  }
  if (method == "/fencegate.v1.LockService/Leader")
    return v1::LockCall::kLeaderFieldNumber;
  if (method == "/fencegate.v1.LockService/Resign")
    return v1::LockCall::kResignFieldNumber;
  return 0;
}

// Both calls have request_id = 1, and both requests calls = 1.
static_assert(static_cast<int>(v1::GatewayCall::kRequestIdFieldNumber) ==
              static_cast<int>(v1::LockCall::kRequestIdFieldNumber));
static_assert(static_cast<int>(v1::GatewaySessionRequest::kCallsFieldNumber) ==
              static_cast<int>(v1::LockSessionRequest::kCallsFieldNumber));

std::string Delimited(int field, const std::string& bytes) {
  return Tag(field, 2) + Varint(bytes.size()) + bytes;
}

// A GatewayResult's or LockResult's answer as its unary call's reply:
// the response's bytes, or the status from `error`.
absl::StatusOr<testing::RawReply> ReplyOf(const google::protobuf::Message& result) {
  const google::protobuf::Reflection& reflection = *result.GetReflection();
  const google::protobuf::FieldDescriptor* answer = reflection.GetOneofFieldDescriptor(
      result, result.GetDescriptor()->FindOneofByName("result"));
  if (answer == nullptr) return absl::InternalError("an empty answer");
  const google::protobuf::Message& value = reflection.GetMessage(result, answer);
  testing::RawReply reply;
  if (answer->message_type() == v1::RpcStatus::descriptor()) {
    v1::RpcStatus status;
    status.CopyFrom(value);
    reply.status = ToGrpcStatus(FromRpcStatus(status));
  } else {
    reply.response = value.SerializeAsString();
  }
  return reply;
}

// Every answer of `messages` (Response bytes) by request id.
template <typename Response>
absl::StatusOr<std::map<uint64_t, testing::RawReply>> Collect(
    const std::vector<std::string>& messages) {
  std::map<uint64_t, testing::RawReply> answers;
  for (const std::string& bytes : messages) {
    Response message;
    if (!message.ParseFromString(bytes)) {
      return absl::InternalError(
          absl::StrCat("a ", Response::descriptor()->full_name(), " does not parse"));
    }
    if constexpr (std::is_same_v<Response, v1::LockSessionResponse>) {
      if (message.lost_size() > 0) {
        return absl::InternalError(absl::StrCat("a lease was pushed as lost: ",
                                                message.lost(0).ShortDebugString()));
      }
    }
    for (const auto& result : message.results()) {
      absl::StatusOr<testing::RawReply> reply = ReplyOf(result);
      if (!reply.ok()) {
        return absl::InternalError(
            absl::StrCat("request ", result.request_id(), ": ", reply.status().message()));
      }
      if (!answers.emplace(result.request_id(), *std::move(reply)).second) {
        return absl::InternalError(
            absl::StrCat("request ", result.request_id(), " was answered twice"));
      }
    }
  }
  return answers;
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

absl::StatusOr<std::map<uint64_t, testing::RawReply>> AnswersOf(
    const std::vector<std::string>& messages) {
  return Collect<v1::GatewaySessionResponse>(messages);
}

absl::StatusOr<std::map<uint64_t, testing::RawReply>> LockAnswersOf(
    const std::vector<std::string>& messages) {
  return Collect<v1::LockSessionResponse>(messages);
}

}  // namespace fencegate::conformance
