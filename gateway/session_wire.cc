#include "gateway/session_wire.h"

#include <utility>

#include "common/base/errors.h"
#include "fencegate/v1/errors.pb.h"
#include "gateway/request_protos.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

// Appends `result` as one element of GatewaySessionResponse.results.
void Append(const v1::GatewayResult& result, std::string* out) {
  AppendElement(v1::GatewaySessionResponse::kResultsFieldNumber, result, out);
}

}  // namespace

void AppendWriteResult(uint64_t request_id, CallKind kind, int multi_count,
                       const absl::StatusOr<WriteResult>& result, std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  if (kind == CallKind::kMultiWrite) {
    FillMultiWriteResponse(*result, multi_count, answer.mutable_multi_write());
  } else {
    FillWriteResponse(*result, answer.mutable_write());
  }
  Append(answer, out);
}

void AppendReadResult(uint64_t request_id, absl::StatusOr<ReadResult> result,
                      std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  FillReadResponse(*std::move(result), answer.mutable_read());
  Append(answer, out);
}

void AppendFenceResult(uint64_t request_id, const absl::StatusOr<FenceResult>& result,
                       std::string* out) {
  if (!result.ok()) return AppendError(request_id, result.status(), out);
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  FillFenceResponse(*result, answer.mutable_fence());
  Append(answer, out);
}

void AppendError(uint64_t request_id, const absl::Status& status, std::string* out) {
  v1::GatewayResult answer;
  answer.set_request_id(request_id);
  ToRpcStatus(status, answer.mutable_error());
  Append(answer, out);
}

}  // namespace fencegate::gateway
