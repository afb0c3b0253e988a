#include "tests/cluster/cluster_client.h"

#include "absl/time/clock.h"
#include "client/channel.h"
#include "common/grpc/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::testing {
namespace {

void SetDeadline(grpc::ClientContext& context, absl::Duration d) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + d));
}

template <typename Response>
absl::StatusOr<Response> Result(const grpc::Status& status, Response response) {
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace

InstanceStub::InstanceStub(const std::string& address)
    : stub_(v1::LockService::NewStub(
          grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

absl::StatusOr<v1::AcquireResponse> InstanceStub::Acquire(
    const std::string& resource, const std::string& holder, absl::Duration ttl,
    absl::Duration wait, absl::Duration deadline, const std::string& request_id) {
  grpc::ClientContext context;
  SetDeadline(context, wait + deadline);
  v1::AcquireRequest request;
  request.set_resource(resource);
  request.set_holder(holder);
  request.set_ttl_ms(absl::ToInt64Milliseconds(ttl));
  request.set_wait_ms(absl::ToInt64Milliseconds(wait));
  request.set_request_id(request_id);
  v1::AcquireResponse response;
  grpc::Status status = stub_->Acquire(&context, request, &response);
  return Result(status, response);
}

absl::StatusOr<v1::RenewResponse> InstanceStub::Renew(const std::string& resource,
                                                      uint64_t token, absl::Duration ttl) {
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(30));
  v1::RenewRequest request;
  request.set_resource(resource);
  request.set_token(token);
  request.set_ttl_ms(absl::ToInt64Milliseconds(ttl));
  v1::RenewResponse response;
  grpc::Status status = stub_->Renew(&context, request, &response);
  return Result(status, response);
}

absl::StatusOr<v1::ReleaseResponse> InstanceStub::Release(const std::string& resource,
                                                          uint64_t token) {
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(30));
  v1::ReleaseRequest request;
  request.set_resource(resource);
  request.set_token(token);
  v1::ReleaseResponse response;
  grpc::Status status = stub_->Release(&context, request, &response);
  return Result(status, response);
}

absl::StatusOr<v1::DescribeResponse> InstanceStub::Describe(const std::string& resource,
                                                            absl::Duration deadline) {
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  v1::DescribeRequest request;
  request.set_resource(resource);
  v1::DescribeResponse response;
  grpc::Status status = stub_->Describe(&context, request, &response);
  return Result(status, response);
}

std::unique_ptr<client::LockClient> FailoverClient(const std::string& target) {
  // The library's default budget (call_timeout) spans a failover. Only the
  // pace is ours: retries at most 0.5 s apart, since a standby answers
  // UNAVAILABLE over a connected channel, so no reconnection ends a pause
  // early, and the tests' load should find the new leader soon.
  client::ClientOptions options;
  options.retry.max_backoff = absl::Milliseconds(500);
  return std::make_unique<client::LockClient>(
      client::NewClientChannel(target, grpc::InsecureChannelCredentials()), options);
}

}  // namespace fencegate::testing
