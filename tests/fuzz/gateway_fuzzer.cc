// Fuzz target: the gateway's request handlers, minus gRPC. Each input
// (fuzz_frames.h) is a config byte and a sequence of steps: Write,
// MultiWrite, Read, Fence, List and Describe requests as wire bytes, parsed
// and handled as GatewayServiceImpl does (RejectUnknownFields,
// request_protos.h, FencedStore on SQLite), grant-time fencing's
// RaiseFence, and a reopen of the store and its database. Config bit 1:
// signed tokens.
//
// Every reply is judged by FenceModel (tests/unit/fence_model.h), the
// reference model the random sequences use too, and must equal its
// prediction exactly: accepted iff token >= fence and versions match; stale
// and mismatch refusals carry the current fence and version; fenced reads,
// Fence and RaiseFence raise the fence, plain reads do not; List pages and
// Describe are exact. Refusals the model does not decide (the limits' sizes
// and counts, signatures) must change nothing: the harness reads the
// resource back after every refused write, and every resource, key and
// value after a reopen.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/core/token_signer.h"
#include "common/core/validation.h"
#include "common/signing/signing_keys.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/fenced_store.h"
#include "gateway/request_protos.h"
#include "gateway/request_validation.h"
#include "gateway/sqlite_storage.h"
#include "tests/fuzz/fuzz_frames.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/unit/fence_model.h"

namespace fencegate::fuzz {
namespace {

namespace v1 = ::fencegate::v1;
using gateway::FencedStore;
using gateway::FenceModel;
using gateway::GatewayLimits;
using gateway::ReplyText;

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

// Whether the model decides a reply: all but the refusals for input it does
// not check (sizes and counts against the limits, signatures), which must
// change nothing (the harness reads the state back).
bool ModelDecides(const absl::Status& status) {
  return status.code() != absl::StatusCode::kInvalidArgument &&
         status.code() != absl::StatusCode::kPermissionDenied;
}

// User bytes as they may be printed.
std::string Show(absl::string_view bytes) {
  return absl::StrCat("'", absl::CEscape(bytes), "'");
}

// A request as it may be printed: its type and its fields.
std::string RequestText(const google::protobuf::Message& request) {
  return absl::StrCat(request.GetDescriptor()->name(), " ", request.ShortDebugString());
}

// Fails unless the real reply is the model's.
template <typename T>
void Judge(absl::string_view request, const FenceModel::Answer& want,
           const absl::StatusOr<T>& got) {
  const std::string text = ReplyText(got);
  FUZZ_CHECK(text == want.text, request, " answered '", text, "'; the model expects '",
             want.text, "'");
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
    model_.Restart();  // the new store's fence cache is empty
    for (const std::string& resource : resources_) {
      std::vector<std::string> keys;
      for (const auto& [key, object] : model_.Get(resource).objects) keys.push_back(key);
      Verify(resource, keys);
    }
  }

  // Signs the token as the lock service would have, when asked and signing
  // is on. Returns the errors the call may then answer.
  // The fuzzed tokens are exclusive ones (the model knows no shared reads):
  // the request's mode is cleared first.
  template <typename Request>
  AllowedErrors Sign(bool sign, Request& request) {
    request.clear_mode();
    AllowedErrors allowed;
    allowed.aborted = true;
    allowed.denied = signer_ != nullptr && !sign;
    if (sign && signer_ != nullptr) {
      absl::StatusOr<TokenSignature> valid =
          signer_->Sign(request.resource(), request.token(), LeaseMode::kExclusive);
      FUZZ_CHECK(valid.ok(), valid.status().ToString());
      request.mutable_signature()->set_key_id(valid->key_id);
      request.mutable_signature()->set_mac(valid->mac);
    }
    return allowed;
  }

  // Reads `resource` back (after a refused request: unchanged): Describe,
  // plain reads of `keys`, every List page; each must be the model's.
  void Verify(const std::string& resource, const std::vector<std::string>& keys) {
    Judge(absl::StrCat("describe ", Show(resource)), model_.Describe(resource),
          store_->Describe(resource));
    for (const std::string& key : keys) {
      gateway::ReadArgs args;
      args.resource = resource;
      args.key = key;
      Answer<gateway::ReadResult> answer;
      store_->Read(args, answer.Callback());
      Judge(absl::StrCat("read ", Show(resource), " ", Show(key)),
            model_.Read(resource, key), answer.Wait());
    }
    std::string page_token;
    do {
      const gateway::ListArgs args{resource, limits_.max_page_size, page_token};
      const absl::StatusOr<gateway::ListResult> page = store_->List(args);
      Judge(absl::StrCat("list ", Show(resource), " after ", Show(page_token)),
            model_.List(resource, args.page_size, page_token), page);
      page_token = page->next_page_token;  // Judge failed on an error
    } while (!page_token.empty());
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
    if (ModelDecides(result.status())) {
      std::vector<gateway::M> mutations;
      for (const gateway::Mutation& m : args.mutations) {
        mutations.push_back(gateway::M{m.kind, std::string(m.key), std::string(m.value),
                                       m.expected_version});
      }
      resources_.emplace(args.resource);
      const FenceModel::Answer want =
          model_.Write(std::string(args.resource), args.token, mutations, args.multi);
      model_.CommitStep();  // each step commits alone, and no commit fails here
      Judge(RequestText(request), want, result);
    }
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
    if (ModelDecides(result.status())) {
      resources_.emplace(args.resource);
      const FenceModel::Answer want = model_.FencedRead(
          std::string(args.resource), std::string(args.key), args.token);
      model_.CommitStep();
      Judge(RequestText(request), want, result);
    }
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
    if (ModelDecides(result.status())) {
      resources_.emplace(args.resource);
      const FenceModel::Answer want =
          model_.Fence(std::string(args.resource), args.token);
      model_.CommitStep();
      Judge(RequestText(request), want, result);
    }
  }

  // Grant-time fencing: the lock service's fence position, unsigned.
  void RaiseFence(absl::string_view payload) {
    v1::FenceRequest request;
    if (!ParseRequest(payload, request)) return;
    Answer<gateway::FenceResult> answer;
    store_->RaiseFence(request.resource(), request.token(), answer.Callback());
    const absl::StatusOr<gateway::FenceResult>& result = answer.Wait();
    CheckErrorShape("raise fence", result.status(), AllowedErrors());
    if (ModelDecides(result.status())) {
      resources_.emplace(request.resource());
      const FenceModel::Answer want =
          model_.RaiseFence(request.resource(), request.token());
      model_.CommitStep();
      Judge(absl::StrCat("RaiseFence of ", RequestText(request)), want, result);
    }
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
    if (ModelDecides(result.status())) {
      resources_.emplace(request.resource());
      Judge(RequestText(request),
            model_.List(request.resource(), request.page_size(), request.page_token()),
            result);
    }
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
    if (ModelDecides(result.status())) {
      resources_.emplace(request.resource());
      Judge(RequestText(request), model_.Describe(request.resource()), result);
    }
  }

  const GatewayLimits limits_ = FuzzLimits();
  const std::unique_ptr<TokenSigner> signer_;
  const std::string db_path_;
  std::unique_ptr<gateway::SqliteStorage> storage_;
  std::unique_ptr<FencedStore> store_;
  FenceModel model_;
  // The resource of every request the model decided: read back after a
  // reopen.
  std::set<std::string> resources_;
};

}  // namespace
}  // namespace fencegate::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fencegate::fuzz::FrameReader in(data, size);
  fencegate::fuzz::GatewayHarness harness(in.Byte());
  while (!in.done()) harness.Step(in);
  return 0;
}
