#include "tests/integration/server_snapshot.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/grpc_status.h"

namespace fencegate::conformance {
namespace {

// Lock resources and gateway resources the bad requests name.
const std::vector<std::string> kLockResources = {"held", "reentrant", "released",
                                                 "probe", "nobody-has-this"};
const std::vector<std::string> kGatewayResources = {"data", "other", "probe",
                                                    "nothing-here"};
constexpr int64_t kHour = 3600000;  // the longest TTL: no lease ends during the test
constexpr uint64_t kDataToken = 100;
constexpr uint64_t kDataFence = 105;

template <typename Response, typename Call>
absl::StatusOr<Response> Unary(Call call) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  Response response;
  grpc::Status status = call(&ctx, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace

ServerSnapshot::ServerSnapshot(std::shared_ptr<grpc::Channel> lock_channel,
                               std::shared_ptr<grpc::Channel> gateway_channel,
                               const TokenSigner* signer)
    : lock_channel_(std::move(lock_channel)),
      gateway_channel_(std::move(gateway_channel)),
      locks_(v1::LockService::NewStub(lock_channel_)),
      gateway_(v1::Gateway::NewStub(gateway_channel_)),
      signer_(signer) {}

v1::TokenSignature ServerSnapshot::Sign(const std::string& resource, uint64_t token) const {
  v1::TokenSignature out;
  absl::StatusOr<TokenSignature> signature =
      signer_->Sign(resource, token, LeaseMode::kExclusive);
  if (signature.ok()) {
    out.set_key_id(signature->key_id);
    out.set_mac(signature->mac);
  }
  return out;
}

absl::StatusOr<uint64_t> ServerSnapshot::Acquire(const std::string& resource,
                                                 const std::string& holder,
                                                 const std::string& request_id) {
  v1::AcquireRequest request;
  request.set_resource(resource);
  request.set_holder(holder);
  request.set_ttl_ms(kHour);
  request.set_request_id(request_id);
  absl::StatusOr<v1::AcquireResponse> r = Unary<v1::AcquireResponse>(
      [&](grpc::ClientContext* ctx, v1::AcquireResponse* out) {
        return locks_->Acquire(ctx, request, out);
      });
  if (!r.ok()) return r.status();
  if (!r->acquired()) return absl::FailedPreconditionError(resource + " not acquired");
  return r->token();
}

absl::Status ServerSnapshot::Release(const std::string& resource, uint64_t token) {
  v1::ReleaseRequest request;
  request.set_resource(resource);
  request.set_token(token);
  *request.mutable_signature() = Sign(resource, token);
  return Unary<v1::ReleaseResponse>([&](grpc::ClientContext* ctx, v1::ReleaseResponse* out) {
           return locks_->Release(ctx, request, out);
         }).status();
}

absl::StatusOr<uint64_t> ServerSnapshot::Write(
    const std::string& resource, uint64_t token,
    const std::vector<std::pair<std::string, std::string>>& puts) {
  v1::MultiWriteRequest request;
  request.set_resource(resource);
  request.set_token(token);
  *request.mutable_signature() = Sign(resource, token);
  for (const auto& [key, value] : puts) {
    v1::Mutation* m = request.add_mutations();
    m->set_key(key);
    m->set_value(value);
  }
  absl::StatusOr<v1::MultiWriteResponse> r = Unary<v1::MultiWriteResponse>(
      [&](grpc::ClientContext* ctx, v1::MultiWriteResponse* out) {
        return gateway_->MultiWrite(ctx, request, out);
      });
  if (!r.ok()) return r.status();
  return r->versions(0);
}

absl::StatusOr<KnownState> ServerSnapshot::Prepare() {
  KnownState known;
  absl::StatusOr<uint64_t> held = Acquire("held", "alice", "");
  absl::StatusOr<uint64_t> reentrant = Acquire("reentrant", "bob", "first");
  absl::StatusOr<uint64_t> again = Acquire("reentrant", "bob", "second");
  absl::StatusOr<uint64_t> released = Acquire("released", "carol", "");
  for (const auto* token : {&held, &reentrant, &again, &released}) {
    if (!token->ok()) return token->status();
  }
  absl::Status status = Release("released", *released);
  if (!status.ok()) return status;
  known.held_token = *held;
  known.reentrant_token = *reentrant;
  known.released_token = *released;

  absl::StatusOr<uint64_t> version =
      Write("data", kDataToken, {{"a", "alpha"}, {"b", "beta"}, {"c", "gamma"}});
  if (!version.ok()) return version.status();
  known.data_version = *version;
  v1::FenceRequest fence;
  fence.set_resource("data");
  fence.set_token(kDataFence);
  *fence.mutable_signature() = Sign("data", kDataFence);
  status = Unary<v1::FenceResponse>([&](grpc::ClientContext* ctx, v1::FenceResponse* out) {
             return gateway_->Fence(ctx, fence, out);
           }).status();
  if (!status.ok()) return status;
  known.data_fence = kDataFence;
  if (absl::StatusOr<uint64_t> other = Write("other", 7, {{"k", "v"}}); !other.ok()) {
    return other.status();
  }
  known.sign = [this](const std::string& resource, uint64_t token) {
    return Sign(resource, token);
  };
  return known;
}

absl::StatusOr<std::string> ServerSnapshot::Take() {
  std::string out;
  for (const std::string& name : kLockResources) {
    v1::DescribeRequest request;
    request.set_resource(name);
    absl::StatusOr<v1::DescribeResponse> d = Unary<v1::DescribeResponse>(
        [&](grpc::ClientContext* ctx, v1::DescribeResponse* r) {
          return locks_->Describe(ctx, request, r);
        });
    if (!d.ok()) return d.status();
    absl::StrAppend(&out, "lock ", name, ": held ", d->held(), " by '", d->holder(),
                    "' token ", d->token(), " holds ", d->hold_count(), " waiters ",
                    d->waiters(), " delay ", d->lock_delay_remaining_ms(), "\n");
  }
  for (const std::string& name : kGatewayResources) {
    v1::DescribeResourceRequest describe;
    describe.set_resource(name);
    absl::StatusOr<v1::DescribeResourceResponse> d = Unary<v1::DescribeResourceResponse>(
        [&](grpc::ClientContext* ctx, v1::DescribeResourceResponse* r) {
          return gateway_->Describe(ctx, describe, r);
        });
    if (!d.ok()) return d.status();
    absl::StrAppend(&out, "gateway ", name, ": fence ", d->max_token(), ", ",
                    d->key_count(), " keys, ", d->total_bytes(), " bytes\n");
    v1::ListRequest list;
    list.set_resource(name);
    list.set_page_size(1000);
    absl::StatusOr<v1::ListResponse> keys = Unary<v1::ListResponse>(
        [&](grpc::ClientContext* ctx, v1::ListResponse* r) {
          return gateway_->List(ctx, list, r);
        });
    if (!keys.ok()) return keys.status();
    for (const v1::KeyInfo& key : keys->keys()) {
      v1::ReadRequest read;
      read.set_resource(name);
      read.set_key(key.key());
      absl::StatusOr<v1::ReadResponse> value = Unary<v1::ReadResponse>(
          [&](grpc::ClientContext* ctx, v1::ReadResponse* r) {
            return gateway_->Read(ctx, read, r);
          });
      if (!value.ok()) return value.status();
      absl::StrAppend(&out, "  ", key.key(), " version ", key.version(), " size ",
                      key.size_bytes(), ": '", value->value(), "' (read at version ",
                      value->version(), ")\n");
    }
  }
  return out;
}

absl::Status ServerSnapshot::StillServes(const KnownState& known) {
  const uint64_t last =
      std::max({known.held_token, known.reentrant_token, known.released_token});
  absl::StatusOr<uint64_t> token = Acquire("after", "dave", "");
  if (!token.ok()) return token.status();
  if (*token != last + 1) {
    return absl::InternalError(absl::StrCat("an ordinary Acquire got token ", *token,
                                            ", not ", last + 1,
                                            ": some bad request drew a token"));
  }
  absl::Status released = Release("after", *token);
  if (!released.ok()) return released;
  absl::StatusOr<uint64_t> version = Write("data", known.data_fence, {{"after", "ok"}});
  if (!version.ok()) return version.status();
  if (*version != known.data_version + 1) {
    return absl::InternalError(absl::StrCat("an ordinary Write got version ", *version,
                                            ", not ", known.data_version + 1,
                                            ": some bad request wrote to \"data\""));
  }
  return absl::OkStatus();
}

}  // namespace fencegate::conformance
