#include "fencegate/client/gateway_client.h"

#include <algorithm>
#include <future>
#include <memory>

#include "absl/time/clock.h"
#include "client/channel.h"
#include "client/retry.h"
#include "client/session_stream.h"
#include "client/wire.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::client {
namespace {

namespace v1 = ::fencegate::v1;

v1::Mutation ToProto(const Mutation& m) {
  v1::Mutation proto;
  proto.set_key(m.key);
  if (m.value) {
    proto.set_value(*m.value);
  } else {
    proto.set_delete_(true);
  }
  if (m.expected_version) proto.set_expected_version(*m.expected_version);
  return proto;
}

ReadResult FromProto(const v1::ReadResponse& r) {
  return ReadResult{r.found(), r.value(), r.version(), r.max_token()};
}

// The token's signature and mode, as every request with a token carries
// them.
template <typename Request>
void SetSignatureAndMode(const Fencing& fencing, Request& request) {
  request.set_mode(static_cast<v1::LeaseMode>(fencing.mode));
  if (fencing.signature.empty()) return;
  request.mutable_signature()->set_key_id(fencing.signature.key_id);
  request.mutable_signature()->set_mac(fencing.signature.mac);
}

v1::WriteRequest WriteRequestOf(const Fencing& fencing, const Mutation& mutation) {
  v1::WriteRequest request;
  request.set_resource(fencing.resource);
  request.set_token(fencing.token);
  SetSignatureAndMode(fencing, request);
  *request.mutable_mutation() = ToProto(mutation);
  return request;
}

// A request as a call on the Session stream, and its response out of the
// call's result (false: the result is of another kind).
void SetRequest(const v1::WriteRequest& r, v1::GatewayCall& call) {
  *call.mutable_write() = r;
}
void SetRequest(const v1::MultiWriteRequest& r, v1::GatewayCall& call) {
  *call.mutable_multi_write() = r;
}
void SetRequest(const v1::ReadRequest& r, v1::GatewayCall& call) {
  *call.mutable_read() = r;
}
void SetRequest(const v1::FenceRequest& r, v1::GatewayCall& call) {
  *call.mutable_fence() = r;
}
bool GetResponse(v1::GatewayResult& r, v1::WriteResponse* out) {
  return TakeResponse(r, v1::GatewayResult::kWrite, &v1::GatewayResult::mutable_write,
                      out);
}
bool GetResponse(v1::GatewayResult& r, v1::MultiWriteResponse* out) {
  return TakeResponse(r, v1::GatewayResult::kMultiWrite,
                      &v1::GatewayResult::mutable_multi_write, out);
}
bool GetResponse(v1::GatewayResult& r, v1::ReadResponse* out) {
  return TakeResponse(r, v1::GatewayResult::kRead, &v1::GatewayResult::mutable_read, out);
}
bool GetResponse(v1::GatewayResult& r, v1::FenceResponse* out) {
  return TakeResponse(r, v1::GatewayResult::kFence, &v1::GatewayResult::mutable_fence,
                      out);
}

absl::Status WrongKind() {
  return absl::InternalError(
      "the gateway answered a call on its Session stream with another kind of response");
}

}  // namespace

struct GatewayClient::Stub {
  std::unique_ptr<v1::Gateway::Stub> rpc;
};

struct GatewayClient::Session
    : SessionStream<v1::Gateway::Stub, v1::GatewaySessionRequest,
                    v1::GatewaySessionResponse> {
  using SessionStream::SessionStream;
};

GatewayClient::GatewayClient(std::shared_ptr<grpc::Channel> channel,
                             ClientOptions options)
    : channel_(std::move(channel)),
      stub_(new Stub{v1::Gateway::NewStub(channel_)}),
      options_(options),
      session_(std::make_unique<Session>(stub_->rpc.get(), options_.max_stream_in_flight,
                                         "the gateway's Session stream")) {}

GatewayClient::~GatewayClient() = default;

absl::StatusOr<std::unique_ptr<GatewayClient>> GatewayClient::Connect(
    const std::string& address, ClientOptions options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      NewClientChannel(address, options.tls);
  if (!channel.ok()) return channel.status();
  return std::make_unique<GatewayClient>(*std::move(channel), options);
}

template <typename Call>
absl::Status GatewayClient::Run(Call call) {
  Clock& clock = *options_.clock;
  const absl::Time deadline = CallDeadline(options_, options_.rpc_timeout, clock);
  return RetryUnavailable(
      options_.retry, clock, deadline,
      [&] {
        grpc::ClientContext ctx;
        // gRPC takes deadlines on the wall clock; ours are monotonic.
        ctx.set_deadline(absl::ToChronoTime(
            absl::Now() + AttemptTimeout(deadline, options_.rpc_timeout, clock)));
        return FromGrpcStatus(call(ctx));
      },
      [this](absl::Duration at_most) {
        PauseForChannel(*channel_, absl::Now() + at_most);
      });
}

template <typename Response, typename Request, typename Unary>
absl::StatusOr<Response> GatewayClient::Send(const Request& request, Unary unary) {
  Response response;
  if (options_.gateway_transport == Transport::kUnary) {
    absl::Status status =
        Run([&](grpc::ClientContext& ctx) { return unary(ctx, request, &response); });
    if (!status.ok()) return status;
    return response;
  }
  v1::GatewayCall call;
  SetRequest(request, call);
  Clock& clock = *options_.clock;
  const absl::Time deadline = CallDeadline(options_, options_.rpc_timeout, clock);
  absl::Status status = RetryUnavailable(
      options_.retry, clock, deadline,
      [&]() -> absl::Status {
        // gRPC and the session take deadlines on the wall clock.
        absl::StatusOr<v1::GatewayResult> result = session_->SendAndWait(
            call, absl::Now() + AttemptTimeout(deadline, options_.rpc_timeout, clock));
        if (!result.ok()) return result.status();
        return GetResponse(*result, &response) ? absl::OkStatus() : WrongKind();
      },
      [this](absl::Duration at_most) {
        PauseForChannel(*channel_, absl::Now() + at_most);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<WriteResult> GatewayClient::Write(const Fencing& fencing,
                                                 const Mutation& mutation) {
  const v1::WriteRequest request = WriteRequestOf(fencing, mutation);
  absl::StatusOr<v1::WriteResponse> response = Send<v1::WriteResponse>(
      request,
      [this](grpc::ClientContext& ctx, const v1::WriteRequest& r,
             v1::WriteResponse* out) { return stub_->rpc->Write(&ctx, r, out); });
  if (!response.ok()) return response.status();
  NoteFenced(fencing);
  return WriteResult{response->version(), response->max_token()};
}

absl::StatusOr<WriteResult> GatewayClient::Put(const Fencing& fencing, const std::string& key,
                                               const std::string& value,
                                               std::optional<uint64_t> expected_version) {
  return Write(fencing, Mutation{key, value, expected_version});
}

absl::StatusOr<WriteResult> GatewayClient::Delete(const Fencing& fencing,
                                                  const std::string& key,
                                                  std::optional<uint64_t> expected_version) {
  return Write(fencing, Mutation{key, std::nullopt, expected_version});
}

absl::StatusOr<MultiWriteResult> GatewayClient::MultiWrite(
    const Fencing& fencing, const std::vector<Mutation>& mutations) {
  v1::MultiWriteRequest request;
  request.set_resource(fencing.resource);
  request.set_token(fencing.token);
  SetSignatureAndMode(fencing, request);
  for (const Mutation& m : mutations) *request.add_mutations() = ToProto(m);
  absl::StatusOr<v1::MultiWriteResponse> response = Send<v1::MultiWriteResponse>(
      request, [this](grpc::ClientContext& ctx, const v1::MultiWriteRequest& r,
                      v1::MultiWriteResponse* out) {
        return stub_->rpc->MultiWrite(&ctx, r, out);
      });
  if (!response.ok()) return response.status();
  NoteFenced(fencing);
  return MultiWriteResult{{response->versions().begin(), response->versions().end()},
                          response->max_token()};
}

absl::StatusOr<ReadResult> GatewayClient::Read(const Fencing& fencing,
                                               const std::string& key) {
  v1::ReadRequest request;
  request.set_resource(fencing.resource);
  request.set_key(key);
  request.set_token(fencing.token);
  SetSignatureAndMode(fencing, request);
  absl::StatusOr<v1::ReadResponse> response = SendRead(request);
  if (!response.ok()) return response.status();
  NoteFenced(fencing);
  return FromProto(*response);
}

absl::StatusOr<ReadResult> GatewayClient::ReadUnfenced(const std::string& resource,
                                                       const std::string& key) {
  v1::ReadRequest request;
  request.set_resource(resource);
  request.set_key(key);
  absl::StatusOr<v1::ReadResponse> response = SendRead(request);
  if (!response.ok()) return response.status();
  return FromProto(*response);
}

absl::StatusOr<uint64_t> GatewayClient::Fence(const Fencing& fencing) {
  v1::FenceRequest request;
  request.set_resource(fencing.resource);
  request.set_token(fencing.token);
  SetSignatureAndMode(fencing, request);
  absl::StatusOr<v1::FenceResponse> response = Send<v1::FenceResponse>(
      request,
      [this](grpc::ClientContext& ctx, const v1::FenceRequest& r,
             v1::FenceResponse* out) { return stub_->rpc->Fence(&ctx, r, out); });
  if (!response.ok()) return response.status();
  NoteFenced(fencing);
  return response->max_token();
}

absl::StatusOr<v1::ReadResponse> GatewayClient::SendRead(const v1::ReadRequest& request) {
  return Send<v1::ReadResponse>(
      request, [this](grpc::ClientContext& ctx, const v1::ReadRequest& r,
                      v1::ReadResponse* out) { return stub_->rpc->Read(&ctx, r, out); });
}

void GatewayClient::WriteAsync(const Fencing& fencing, const Mutation& mutation,
                               WriteDone done) {
  v1::GatewayCall call;
  *call.mutable_write() = WriteRequestOf(fencing, mutation);
  session_->Send(std::move(call), absl::Now() + options_.rpc_timeout,
                 [this, done = std::move(done),
                  fencing](absl::StatusOr<v1::GatewayResult> result) mutable {
                   if (!result.ok()) return done(result.status());
                   v1::WriteResponse response;
                   if (!GetResponse(*result, &response)) return done(WrongKind());
                   NoteFenced(fencing);
                   done(WriteResult{response.version(), response.max_token()});
                 });
}

std::future<absl::StatusOr<WriteResult>> GatewayClient::PutAsync(
    const Fencing& fencing, const std::string& key, const std::string& value,
    std::optional<uint64_t> expected_version) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<WriteResult>>>();
  std::future<absl::StatusOr<WriteResult>> future = promise->get_future();
  WriteAsync(fencing, Mutation{key, value, expected_version},
             [promise](absl::StatusOr<WriteResult> result) {
               promise->set_value(std::move(result));
             });
  return future;
}

absl::StatusOr<ListPage> GatewayClient::List(const std::string& resource,
                                             uint32_t page_size,
                                             const std::string& page_token) {
  v1::ListRequest request;
  request.set_resource(resource);
  request.set_page_size(page_size);
  request.set_page_token(page_token);
  v1::ListResponse response;
  absl::Status status = Run([&](grpc::ClientContext& ctx) {
    return stub_->rpc->List(&ctx, request, &response);
  });
  if (!status.ok()) return status;
  ListPage page;
  for (const v1::KeyInfo& k : response.keys()) {
    page.keys.push_back(KeyEntry{k.key(), k.version(), k.size_bytes()});
  }
  page.next_page_token = response.next_page_token();
  return page;
}

absl::StatusOr<ListPage> GatewayClient::List(const Lease& lease, uint32_t page_size,
                                             const std::string& page_token) {
  // A shared lease's token cannot fence (it never moves the fence).
  const Fencing fencing = FencingOf(lease);
  if (fencing.mode == LeaseMode::kExclusive && !IsFenced(fencing)) {
    absl::StatusOr<uint64_t> fenced = Fence(lease);
    if (!fenced.ok()) return fenced.status();
  }
  return List(lease.resource(), page_size, page_token);
}

absl::StatusOr<ResourceSummary> GatewayClient::Describe(const std::string& resource) {
  v1::DescribeResourceRequest request;
  request.set_resource(resource);
  v1::DescribeResourceResponse response;
  absl::Status status = Run([&](grpc::ClientContext& ctx) {
    return stub_->rpc->Describe(&ctx, request, &response);
  });
  if (!status.ok()) return status;
  return ResourceSummary{response.max_token(), response.key_count(), response.total_bytes()};
}

void GatewayClient::NoteFenced(const Fencing& fencing) {
  // Only an exclusive lease's token raises the fence (a shared one's reads
  // leave it as it is).
  if (fencing.mode != LeaseMode::kExclusive) return;
  absl::MutexLock lock(&mu_);
  uint64_t& token = fenced_[fencing.resource];
  token = std::max(token, fencing.token);
}

bool GatewayClient::IsFenced(const Fencing& fencing) {
  absl::MutexLock lock(&mu_);
  auto it = fenced_.find(fencing.resource);
  return it != fenced_.end() && it->second >= fencing.token;
}

}  // namespace fencegate::client
