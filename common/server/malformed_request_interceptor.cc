#include "common/server/malformed_request_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/descriptor.h"

namespace fencegate {
namespace {

using ::grpc::experimental::InterceptionHookPoints;

// "/fencegate.v1.LockService/Acquire" -> "fencegate.v1.AcquireRequest", or
// the method itself when its type is not compiled in.
std::string RequestType(const std::string& method) {
  const std::string name = absl::StrReplaceAll(
      method.size() > 1 ? method.substr(1) : method, {{"/", "."}});
  const google::protobuf::MethodDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(name);
  return descriptor != nullptr ? descriptor->input_type()->full_name()
                               : absl::StrCat(method, " request");
}

class MalformedRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  // `method` is the server's registered name: it outlives every call.
  explicit MalformedRequestInterceptor(const char* method)
      : method_(method != nullptr ? method : "") {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      malformed_ = true;
    }
    if (malformed_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      methods->ModifySendStatus(MalformedRequestStatus(RequestType(method_)));
    }
    methods->Proceed();
  }

 private:
  const char* const method_;  // not copied: this runs on every call
  bool malformed_ = false;
};

}  // namespace

grpc::Status MalformedRequestStatus(const std::string& type) {
  return grpc::Status(
      grpc::StatusCode::INVALID_ARGUMENT,
      absl::StrCat("the request is not a valid ", type,
                   ": its bytes do not parse as that protobuf message; fix "
                   "the client's encoding and do not retry it unchanged"));
}

grpc::experimental::Interceptor* MalformedRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  // Only these receive their request before the handler runs. A streaming
  // read also reports a null message, at the end of the client's stream,
  // which is no fault (server reflection's calls end that way).
  using Type = grpc::experimental::ServerRpcInfo::Type;
  if (info->type() != Type::UNARY && info->type() != Type::SERVER_STREAMING) return nullptr;
  return new MalformedRequestInterceptor(info->method());
}

}  // namespace fencegate
