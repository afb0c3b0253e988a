#include "gateway/session_reactor.h"

#include <utility>

#include "common/grpc_status.h"
#include "grpcpp/support/slice.h"

namespace fencegate::gateway {
namespace {

absl::Status ShuttingDown() {
  return absl::UnavailableError(
      "the gateway is shutting down; every request of this stream that got no answer "
      "was not applied: resend it on a new stream, to another instance or after the "
      "restart");
}

void DeleteString(void* bytes) { delete static_cast<std::string*>(bytes); }

}  // namespace

// ------------------------------------------------------------ registry

void SessionRegistry::CloseAll() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  for (Session* session : sessions_) session->Close(ShuttingDown());
}

bool SessionRegistry::Add(Session* session) {
  absl::MutexLock lock(&mu_);
  if (closed_) return false;
  sessions_.insert(session);
  return true;
}

void SessionRegistry::Remove(Session* session) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(session);
}

// ------------------------------------------------------------- reactor

SessionReactor::SessionReactor(FencedStore* store, const SessionLimits& limits,
                               SessionRegistry* registry)
    : registry_(registry) {
  session_ = Session::Start(store, limits, &transport_);
  if (!registry_->Add(session_)) session_->Close(ShuttingDown());
}

void SessionReactor::OnReadDone(bool ok) {
  if (!ok) {
    session_->OnReadsDone();
    return;
  }
  grpc::Slice slice;
  if (!in_.TrySingleSlice(&slice).ok() && !in_.DumpToSingleSlice(&slice).ok()) {
    session_->OnReadsDone();  // gRPC could not hand over the bytes
    return;
  }
  in_.Clear();
  session_->OnMessage(absl::string_view(reinterpret_cast<const char*>(slice.begin()),
                                        slice.size()));
}

void SessionReactor::OnWriteDone(bool ok) {
  out_.Clear();
  session_->OnWriteDone(ok);
}

void SessionReactor::OnCancel() { session_->OnCancel(); }

void SessionReactor::OnDone() {
  registry_->Remove(session_);
  session_->Detach();
  delete this;
}

void SessionReactor::Transport::StartRead() { reactor_->StartRead(&reactor_->in_); }

void SessionReactor::Transport::StartWrite(std::string bytes) {
  // The slice takes the bytes over: no copy.
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(owned->data(), owned->size(), &DeleteString, owned);
  reactor_->out_ = grpc::ByteBuffer(&slice, 1);
  reactor_->StartWrite(&reactor_->out_);
}

void SessionReactor::Transport::Finish(const absl::Status& status) {
  reactor_->Finish(ToGrpcStatus(status));
}

}  // namespace fencegate::gateway
