#include "common/server/stream_reactor.h"

#include <utility>

#include "common/grpc/byte_buffers.h"
#include "common/grpc/grpc_status.h"
#include "common/server/raw_stream_reads.h"

namespace fencegate {

// ------------------------------------------------------------- reactor

StreamReactor::StreamReactor(absl::FunctionRef<StreamSession*(StreamTransport*)> start,
                             StreamRegistry* registry)
    : registry_(registry) {
  session_ = start(&transport_);
  absl::Status closed;
  if (registry_ != nullptr && !registry_->Add(session_, &closed)) session_->Close(closed);
}

void StreamReactor::OnReadDone(bool ok) { DeliverRead(ok, in_, *session_); }

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
  reactor_->out_ = ByteBufferOf(std::move(bytes));
  reactor_->StartWrite(&reactor_->out_);
}

void StreamReactor::Transport::Finish(const absl::Status& status) {
  reactor_->Finish(ToGrpcStatus(status));
}

}  // namespace fencegate
