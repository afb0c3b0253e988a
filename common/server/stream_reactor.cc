#include "common/server/stream_reactor.h"

#include <utility>

#include "common/base/log.h"
#include "common/grpc/grpc_status.h"
#include "grpcpp/support/slice.h"

namespace fencegate {
namespace {

void DeleteString(void* bytes) { delete static_cast<std::string*>(bytes); }

}  // namespace

// ------------------------------------------------------------ registry

StreamRegistry::StreamRegistry(size_t max_sessions)
    : quota_(max_sessions, "Session streams", "--max_sessions",
             "Use one stream per client for all its calls, close the streams it no "
             "longer needs, or retry later or on another instance") {}

void StreamRegistry::CloseAll(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  close_status_ = status;
  for (StreamSession* session : sessions_) session->Close(status);
}

size_t StreamRegistry::live() {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

bool StreamRegistry::AwaitEnded(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ended = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sessions_.empty(); };
  if (mu_.AwaitWithDeadline(absl::Condition(&ended), deadline)) return true;
  LogWarning("%d Session stream(s) still open at the shutdown deadline "
             "(--shutdown_grace); they are cancelled, and their clients see CANCELLED",
             static_cast<int>(sessions_.size()));
  return false;
}

bool StreamRegistry::Add(StreamSession* session, absl::Status* status) {
  absl::MutexLock lock(&mu_);
  if (closed_) {
    *status = close_status_;
    return false;
  }
  *status = quota_.Take();
  if (!status->ok()) return false;
  sessions_.insert(session);
  return true;
}

void StreamRegistry::Remove(StreamSession* session) {
  absl::MutexLock lock(&mu_);
  if (sessions_.erase(session) > 0) quota_.Give();
}

// ------------------------------------------------------------- reactor

StreamReactor::StreamReactor(absl::FunctionRef<StreamSession*(StreamTransport*)> start,
                             StreamRegistry* registry)
    : registry_(registry) {
  session_ = start(&transport_);
  absl::Status closed;
  if (registry_ != nullptr && !registry_->Add(session_, &closed)) session_->Close(closed);
}

void StreamReactor::OnReadDone(bool ok) {
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
  session_->OnMessage(
      absl::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size()));
}

void StreamReactor::OnWriteDone(bool ok) {
  out_.Clear();
  session_->OnWriteDone(ok);
}

void StreamReactor::OnCancel() { session_->OnCancel(); }

void StreamReactor::OnDone() {
  if (registry_ != nullptr) registry_->Remove(session_);
  session_->Detach();
  delete this;
}

void StreamReactor::Transport::StartRead() { reactor_->StartRead(&reactor_->in_); }

void StreamReactor::Transport::StartWrite(std::string bytes) {
  // The slice takes the bytes over: no copy.
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(owned->data(), owned->size(), &DeleteString, owned);
  reactor_->out_ = grpc::ByteBuffer(&slice, 1);
  reactor_->StartWrite(&reactor_->out_);
}

void StreamReactor::Transport::Finish(const absl::Status& status) {
  reactor_->Finish(ToGrpcStatus(status));
}

}  // namespace fencegate
