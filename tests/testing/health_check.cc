#include "tests/testing/health_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc/grpc_status.h"
#include "tests/testing/raw_call.h"

namespace fencegate::testing {

absl::StatusOr<Serving> HealthStatus(std::shared_ptr<grpc::Channel> channel,
                                     absl::Duration timeout) {
  // An empty HealthCheckRequest: service "" (the server as a whole).
  RawReply reply = RawUnaryCall(channel, "/grpc.health.v1.Health/Check", "", timeout);
  if (!reply.status.ok()) return FromGrpcStatus(reply.status);
  const std::string& bytes = reply.response;
  if (bytes.empty()) return Serving::kUnknown;  // status 0 is not on the wire
  if (bytes.size() != 2 || bytes[0] != '\x08') {
    return absl::InternalError(absl::StrCat("unexpected health reply of ",
                                            bytes.size(), " bytes"));
  }
  return static_cast<Serving>(bytes[1]);
}

}  // namespace fencegate::testing
