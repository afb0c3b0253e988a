// LockClient's stub (private to client/): the generated gRPC stub and the
// Session stream, and one attempt of a call on either (lock_client.cc,
// election.cc). A request goes on the stream as a LockCall (SetRequest)
// and its response comes out of the LockResult (GetResponse). And
// LockClient::UnaryCall, the retried call that Release, Describe and the
// election calls make.
//
// Thread safety: Attempt() may be called from any thread (the stub and
// the stream are thread-safe).
#ifndef FENCEGATE_CLIENT_LOCK_STUB_H_
#define FENCEGATE_CLIENT_LOCK_STUB_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/retry.h"
#include "client/session_stream.h"
#include "client/wire.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/client_context.h"

namespace fencegate::client {

namespace v1 = ::fencegate::v1;

using LockStream = SessionStream<v1::LockService::Stub, v1::LockSessionRequest,
                                 v1::LockSessionResponse>;

// A request as a call on the Session stream, and its response out of the
// call's result (false: the result is of another kind).
inline void SetRequest(const v1::AcquireRequest& r, v1::LockCall& call) {
  *call.mutable_acquire() = r;
}
inline void SetRequest(const v1::RenewRequest& r, v1::LockCall& call) { *call.mutable_renew() = r; }
inline void SetRequest(const v1::ReleaseRequest& r, v1::LockCall& call) {
  *call.mutable_release() = r;
}
inline void SetRequest(const v1::DescribeRequest& r, v1::LockCall& call) {
  *call.mutable_describe() = r;
}
inline bool GetResponse(v1::LockResult& r, v1::AcquireResponse* out) {
  return TakeResponse(r, v1::LockResult::kAcquire, &v1::LockResult::mutable_acquire, out);
}
inline bool GetResponse(v1::LockResult& r, v1::RenewResponse* out) {
  return TakeResponse(r, v1::LockResult::kRenew, &v1::LockResult::mutable_renew, out);
}
inline bool GetResponse(v1::LockResult& r, v1::ReleaseResponse* out) {
  return TakeResponse(r, v1::LockResult::kRelease, &v1::LockResult::mutable_release, out);
}
inline bool GetResponse(v1::LockResult& r, v1::DescribeResponse* out) {
  return TakeResponse(r, v1::LockResult::kDescribe, &v1::LockResult::mutable_describe,
                      out);
}

inline void SetRequest(const v1::CampaignRequest& r, v1::LockCall& call) {
  *call.mutable_campaign() = r;
}
inline void SetRequest(const v1::ProclaimRequest& r, v1::LockCall& call) {
  *call.mutable_proclaim() = r;
}
inline void SetRequest(const v1::LeaderRequest& r, v1::LockCall& call) {
  *call.mutable_leader() = r;
}
inline void SetRequest(const v1::ResignRequest& r, v1::LockCall& call) {
  *call.mutable_resign() = r;
}
inline bool GetResponse(v1::LockResult& r, v1::ProclaimResponse* out) {
  return TakeResponse(r, v1::LockResult::kProclaim, &v1::LockResult::mutable_proclaim,
                      out);
}
inline bool GetResponse(v1::LockResult& r, v1::LeaderResponse* out) {
  return TakeResponse(r, v1::LockResult::kLeader, &v1::LockResult::mutable_leader, out);
}
inline bool GetResponse(v1::LockResult& r, v1::ResignResponse* out) {
  return TakeResponse(r, v1::LockResult::kResign, &v1::LockResult::mutable_resign, out);
}

inline absl::Status LockWrongKind() {
  return absl::InternalError(
      "the lock service answered a call on its Session stream with another kind of "
      "response");
}

struct LockClient::Stub {
  std::unique_ptr<v1::LockService::Stub> rpc;
  // The asynchronous calls always use it; the blocking ones unless unary.
  std::unique_ptr<LockStream> session;
  bool unary = false;

  // One attempt of a call, at most `timeout` long: the unary `method`, or
  // the same request on the Session stream.
  template <typename Request, typename Response>
  absl::Status Attempt(grpc::Status (v1::LockService::Stub::*method)(
                           grpc::ClientContext*, const Request&, Response*),
                       const Request& request, Response* response,
                       absl::Duration timeout) {
    if (unary) {
      grpc::ClientContext ctx;
      SetTimeout(ctx, timeout);
      return FromGrpcStatus((rpc.get()->*method)(&ctx, request, response));
    }
    v1::LockCall call;
    SetRequest(request, call);
    // The stream takes deadlines on the wall clock, as gRPC does.
    absl::StatusOr<v1::LockResult> result =
        session->SendAndWait(std::move(call), absl::Now() + timeout);
    if (!result.ok()) return result.status();
    if (!GetResponse(*result, response)) return LockWrongKind();
    return absl::OkStatus();
  }
};

template <typename Method, typename Request, typename Response>
absl::Status LockClient::UnaryCall(Method method, const Request& request,
                                   Response* response) {
  Clock& clock = *options_.clock;
  const absl::Time deadline = CallDeadline(options_, options_.rpc_timeout, clock);
  return Retry(deadline, [&] {
    return stub_->Attempt(method, request, response,
                          AttemptTimeout(deadline, options_.rpc_timeout, clock));
  });
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_LOCK_STUB_H_
