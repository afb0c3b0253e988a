// Fuzz target: the gateway's request handlers, minus gRPC. Each input
// (fuzz_frames.h) is a config byte and a sequence of steps: Write,
// MultiWrite, Read, Fence, List and Describe requests as wire bytes, parsed
// and handled as GatewayServiceImpl does (RejectUnknownFields,
// request_protos.h, FencedStore on SQLite), grant-time fencing's
// RaiseFence, and a reopen of the store and its database. GatewayModel
// (gateway_model.h) predicts every reply exactly. Config bit 1: signed
// tokens.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/signing_keys.h"
#include "common/token_signer.h"
#include "common/validation.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/fenced_store.h"
#include "gateway/request_protos.h"
#include "gateway/request_validation.h"
#include "gateway/sqlite_storage.h"
#include "tests/fuzz/fuzz_frames.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/gateway_model.h"

namespace fencegate::fuzz {
namespace {

namespace v1 = ::fencegate::v1;
using gateway::FencedStore;
using gateway::GatewayLimits;

// Small limits, so short inputs reach them.
GatewayLimits FuzzLimits() {
  GatewayLimits limits;
  limits.max_resource_bytes = 32;
  limits.max_key_bytes = 32;
  limits.max_value_bytes = 64;
  limits.max_mutations = 4;
  limits.max_request_bytes = 128;
  limits.default_page_size = 3;
  limits.max_page_size = 5;
  return limits;
}

// The reply of one FencedStore call, which may come from its writer thread.
template <typename T>
class Answer {
 public:
  gateway::Callback<T> Callback() {
    return [this](absl::StatusOr<T> result) {
      result_ = std::move(result);
      done_.Notify();
    };
  }
  const absl::StatusOr<T>& Wait() {
    done_.WaitForNotification();
    return result_;
  }

 private:
  absl::Notification done_;
  absl::StatusOr<T> result_ = absl::InternalError("no reply");
};

class GatewayHarness {
 public:
  explicit GatewayHarness(uint8_t config)
      : signer_(FuzzSigner(config & 1)),
        db_path_(ScratchDir() + "/objects.db"),
        model_(limits_) {
    RemoveDatabase(db_path_);
    Open();
  }

  ~GatewayHarness() {
    store_.reset();
    storage_.reset();
    RemoveDatabase(db_path_);
  }

  void Step(FrameReader& in) {
    const uint8_t kind = in.Byte();
    const bool sign = kind & kSigned;
    switch (static_cast<GatewayStep>((kind & ~kSigned) %
                                     static_cast<uint8_t>(GatewayStep::kCount))) {
      case GatewayStep::kWrite:
        return Write<v1::WriteRequest>(in.Payload(), sign);
      case GatewayStep::kMultiWrite:
        return Write<v1::MultiWriteRequest>(in.Payload(), sign);
      case GatewayStep::kRead:
        return Read(in.Payload(), sign);
      case GatewayStep::kFence:
        return Fence(in.Payload(), sign);
      case GatewayStep::kList:
        return List(in.Payload());
      case GatewayStep::kDescribe:
        return Describe(in.Payload());
      case GatewayStep::kReopen:
        return Reopen();
      case GatewayStep::kRaiseFence:
        return RaiseFence(in.Payload());
      case GatewayStep::kCount:
        break;
    }
  }

 private:
  void Open() {
    absl::StatusOr<std::unique_ptr<gateway::SqliteStorage>> storage =
        gateway::SqliteStorage::Open(db_path_, /*readers=*/1);
    FUZZ_CHECK(storage.ok(), storage.status().ToString());
    storage_ = *std::move(storage);
    store_ = std::make_unique<FencedStore>(storage_.get(), limits_, signer_.get());
  }

  // Closes and reopens: everything acknowledged must still be there.
  void Reopen() {
    store_.reset();
    storage_.reset();
    Open();
    for (const std::string& resource : model_.Resources()) Verify(resource, {});
  }

  // Signs the token as the lock service would have, when asked and signing
  // is on. Returns the errors the call may then answer.
  template <typename Request>
  AllowedErrors Sign(bool sign, Request& request) {
    AllowedErrors allowed;
    allowed.aborted = true;
    allowed.denied = signer_ != nullptr && !sign;
    if (sign && signer_ != nullptr) {
      absl::StatusOr<TokenSignature> valid = signer_->Sign(request.resource(), request.token());
      FUZZ_CHECK(valid.ok(), valid.status().ToString());
      request.mutable_signature()->set_key_id(valid->key_id);
      request.mutable_signature()->set_mac(valid->mac);
    }
    return allowed;
  }

  // Reads `resource` back after a refused request: unchanged.
  void Verify(const std::string& resource, const std::vector<std::string>& keys) {
    model_.OnDescribe(resource, store_->Describe(resource));
    for (const std::string& key : keys) {
      gateway::ReadArgs args;
      args.resource = resource;
      args.key = key;
      Answer<gateway::ReadResult> answer;
      store_->Read(args, answer.Callback());
      model_.OnRead(args, answer.Wait());
    }
    gateway::ListArgs all;
    all.resource = resource;
    all.page_size = limits_.max_page_size;
    model_.OnList(all, store_->List(all));
  }

  template <typename Request>
  void Write(absl::string_view payload, bool sign) {
    Request request;
    if (!ParseRequest(payload, request)) return;
    const AllowedErrors allowed = Sign(sign, request);
    gateway::WriteArgs args;
    if constexpr (std::is_same_v<Request, v1::WriteRequest>) {
      args = gateway::WriteArgsFromProto(request);
    } else {
      args = gateway::MultiWriteArgsFromProto(request);
    }
    Answer<gateway::WriteResult> answer;
    store_->Write(args, answer.Callback());
    const absl::StatusOr<gateway::WriteResult>& result = answer.Wait();
    CheckErrorShape("write", result.status(), allowed);
    if (result.ok()) {
      v1::WriteResponse single;
      gateway::FillWriteResponse(*result, &single);
      RoundTrip(single);
      v1::MultiWriteResponse multi;
      gateway::FillMultiWriteResponse(*result, static_cast<int>(args.mutations.size()), &multi);
      RoundTrip(multi);
    }
    model_.OnWrite(args, result);
    if (!result.ok() && ValidateResource(args.resource, limits_).ok()) {
      std::vector<std::string> keys;
      for (const gateway::Mutation& m : args.mutations) {
        if (ValidateName("key", m.key, limits_.max_key_bytes).ok()) keys.emplace_back(m.key);
      }
      Verify(std::string(args.resource), keys);
    }
  }

  void Read(absl::string_view payload, bool sign) {
    v1::ReadRequest request;
    if (!ParseRequest(payload, request)) return;
    const AllowedErrors allowed = Sign(sign && request.token() != 0, request);
    const gateway::ReadArgs args = gateway::ReadArgsFromProto(request);
    Answer<gateway::ReadResult> answer;
    store_->Read(args, answer.Callback());
    const absl::StatusOr<gateway::ReadResult>& result = answer.Wait();
    CheckErrorShape("read", result.status(), allowed);
    if (result.ok()) {
      v1::ReadResponse response;
      gateway::FillReadResponse(*result, &response);
      RoundTrip(response);
    }
    model_.OnRead(args, result);
  }

  void Fence(absl::string_view payload, bool sign) {
    v1::FenceRequest request;
    if (!ParseRequest(payload, request)) return;
    const AllowedErrors allowed = Sign(sign, request);
    const gateway::FenceArgs args = gateway::FenceArgsFromProto(request);
    Answer<gateway::FenceResult> answer;
    store_->Fence(args, answer.Callback());
    const absl::StatusOr<gateway::FenceResult>& result = answer.Wait();
    CheckErrorShape("fence", result.status(), allowed);
    if (result.ok()) {
      v1::FenceResponse response;
      gateway::FillFenceResponse(*result, &response);
      RoundTrip(response);
    }
    model_.OnFence(args, result);
  }

  // Grant-time fencing: the lock service's fence position, unsigned.
  void RaiseFence(absl::string_view payload) {
    v1::FenceRequest request;
    if (!ParseRequest(payload, request)) return;
    Answer<gateway::FenceResult> answer;
    store_->RaiseFence(request.resource(), request.token(), answer.Callback());
    const absl::StatusOr<gateway::FenceResult>& result = answer.Wait();
    CheckErrorShape("raise fence", result.status(), AllowedErrors());
    model_.OnRaiseFence(request.resource(), request.token(), result);
  }

  void List(absl::string_view payload) {
    v1::ListRequest request;
    if (!ParseRequest(payload, request)) return;
    const gateway::ListArgs args = gateway::ListArgsFromProto(request);
    absl::StatusOr<gateway::ListResult> result = store_->List(args);
    CheckErrorShape("list", result.status(), AllowedErrors());
    if (result.ok()) {
      v1::ListResponse response;
      gateway::FillListResponse(*result, &response);
      RoundTrip(response);
    }
    model_.OnList(args, result);
  }

  void Describe(absl::string_view payload) {
    v1::DescribeResourceRequest request;
    if (!ParseRequest(payload, request)) return;
    absl::StatusOr<gateway::ResourceStats> result = store_->Describe(request.resource());
    CheckErrorShape("describe", result.status(), AllowedErrors());
    if (result.ok()) {
      v1::DescribeResourceResponse response;
      gateway::FillDescribeResponse(*result, &response);
      RoundTrip(response);
    }
    model_.OnDescribe(request.resource(), result);
  }

  const GatewayLimits limits_ = FuzzLimits();
  const std::unique_ptr<TokenSigner> signer_;
  const std::string db_path_;
  std::unique_ptr<gateway::SqliteStorage> storage_;
  std::unique_ptr<FencedStore> store_;
  GatewayModel model_;
};

}  // namespace
}  // namespace fencegate::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fencegate::fuzz::FrameReader in(data, size);
  fencegate::fuzz::GatewayHarness harness(in.Byte());
  while (!in.done()) harness.Step(in);
  return 0;
}
