#include "tests/integration/session_bad_requests.h"

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/grpc_status.h"
#include "fencegate/v1/gateway.pb.h"

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
  return 0;
}

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
