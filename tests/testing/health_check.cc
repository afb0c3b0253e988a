#include "tests/testing/health_check.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"

namespace fencegate::testing {

absl::StatusOr<Serving> HealthStatus(std::shared_ptr<grpc::Channel> channel,
                                     absl::Duration timeout) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::Slice empty_message;
  grpc::ByteBuffer request(&empty_message, 1), response;
  absl::Notification done;
  grpc::Status status;
  generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                    &request, &response, [&](grpc::Status s) {
                      status = s;
                      done.Notify();
                    });
  done.WaitForNotification();  // the call's deadline bounds the wait
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("unreadable reply");
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  if (bytes.empty()) return Serving::kUnknown;  // status 0 is not on the wire
  if (bytes.size() != 2 || bytes[0] != '\x08') {
    return absl::InternalError(absl::StrCat("unexpected health reply of ",
                                            bytes.size(), " bytes"));
  }
  return static_cast<Serving>(bytes[1]);
}

}  // namespace fencegate::testing
