#include "tests/testing/raw_call.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"

namespace fencegate::testing {

RawReply RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& method, const std::string& request,
                      absl::Duration timeout) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1), response_buffer;
  absl::Notification done;
  RawReply reply;
  generic.UnaryCall(&ctx, method, grpc::StubOptions(), &request_buffer, &response_buffer,
                    [&](grpc::Status s) {
                      reply.status = std::move(s);
                      done.Notify();
                    });
  done.WaitForNotification();  // the call's deadline bounds the wait
  if (!reply.status.ok()) return reply;
  std::vector<grpc::Slice> slices;
  if (!response_buffer.Dump(&slices).ok()) {
    reply.status = grpc::Status(grpc::StatusCode::INTERNAL, "unreadable response");
    return reply;
  }
  for (const grpc::Slice& s : slices) {
    reply.response.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return reply;
}

}  // namespace fencegate::testing
