#include "gateway/session.h"

#include <utility>
#include <vector>

#include "gateway/gateway_call_authz.h"
#include "gateway/request_protos.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

bool IsPlainRead(const IncomingCall& in) {
  return in.call != nullptr && in.call->request_case() == v1::GatewayCall::kRead &&
         in.call->read().token() == 0;
}

}  // namespace

Session* Session::Start(FencedStore* store, const StreamLimits& limits,
                        StreamTransport* transport, const authz::Authorizer* authorizer,
                        std::string subject) {
  auto* session = new Session(store, limits, transport, authorizer, std::move(subject));
  session->StartReading();
  return session;
}

void Session::AppendError(uint64_t request_id, const absl::Status& status,
                          std::string* out) {
  gateway::AppendError(request_id, status, out);
}

absl::Status Session::HandleMessage(absl::string_view bytes) {
  IncomingMessage* message = IncomingMessage::Parse(bytes).release();
  absl::Status error = message->error();
  if (error.ok()) error = CheckCallCount(message->calls().size());
  if (!error.ok()) {
    message->Unref();
    return error;
  }
  // Fenced calls first, then plain reads, which read storage on this
  // thread: the batch the fenced calls join waits for both
  // (group_commit.h) and is committed on this thread once the message is
  // handled (stream_session.h, "Run to completion").
  CommitArrival arrival = store_->Arriving();
  std::vector<const IncomingCall*> plain_reads;
  for (const IncomingCall& in : message->calls()) {
    if (in.error.ok() && IsPlainRead(in)) {
      plain_reads.push_back(&in);
    } else {
      Dispatch(message, in);
    }
  }
  for (const IncomingCall* in : plain_reads) Dispatch(message, *in);
  AfterMessage(
      [arrival = std::move(arrival)]() mutable { std::move(arrival).FlushHere(); });
  message->Unref();
  return absl::OkStatus();
}

void Session::Dispatch(IncomingMessage* message, const IncomingCall& in) {
  const uint64_t id = in.request_id;
  if (!Admit(id, in.error)) return;
  const v1::GatewayCall& call = *in.call;
  if (absl::Status allowed = AuthorizeCall(authorizer_, subject_, call); !allowed.ok()) {
    Complete(id, [&](std::string* out) { gateway::AppendError(id, allowed, out); });
    return;
  }
  CallKind kind = CallKind::kFence;
  int multi_count = 0;
  switch (call.request_case()) {
    case v1::GatewayCall::kWrite:
      kind = CallKind::kWrite;
      break;
    case v1::GatewayCall::kMultiWrite:
      kind = CallKind::kMultiWrite;
      multi_count = call.multi_write().mutations_size();
      break;
    case v1::GatewayCall::kRead:
      kind = CallKind::kRead;
      break;
    case v1::GatewayCall::kFence:
    case v1::GatewayCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
  auto* pending = google::protobuf::Arena::Create<PendingCall>(
      message->arena(), PendingCall{this, message, id, kind, multi_count});
  message->Ref();
  Ref();
  // Runs once, on the store's writer thread or on this one.
  auto release = [](PendingCall* p) {
    IncomingMessage* m = p->message;  // p lives in m's arena
    Session* s = p->session;
    m->Unref();
    s->Unref();
  };
  switch (kind) {
    case CallKind::kWrite:
    case CallKind::kMultiWrite:
      store_->Write(kind == CallKind::kWrite ? WriteArgsFromProto(call.write())
                                             : MultiWriteArgsFromProto(call.multi_write()),
                    [pending, release](absl::StatusOr<WriteResult> result) {
                      pending->session->Complete(pending->request_id, [&](std::string* out) {
                        AppendWriteResult(pending->request_id, pending->kind,
                                          pending->multi_count, result, out);
                      });
                      release(pending);
                    });
      break;
    case CallKind::kRead:
      store_->Read(ReadArgsFromProto(call.read()),
                   [pending, release](absl::StatusOr<ReadResult> result) {
                     pending->session->Complete(pending->request_id, [&](std::string* out) {
                       AppendReadResult(pending->request_id, std::move(result), out);
                     });
                     release(pending);
                   });
      break;
    case CallKind::kFence:
      store_->Fence(FenceArgsFromProto(call.fence()),
                    [pending, release](absl::StatusOr<FenceResult> result) {
                      pending->session->Complete(pending->request_id, [&](std::string* out) {
                        AppendFenceResult(pending->request_id, result, out);
                      });
                      release(pending);
                    });
      break;
  }
}

}  // namespace fencegate::gateway
