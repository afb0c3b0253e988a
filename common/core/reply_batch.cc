#include "common/core/reply_batch.h"

namespace fencegate {
namespace {

thread_local ReplyBatch* current_batch = nullptr;

}  // namespace

ReplyBatch::ReplyBatch() : outer_(current_batch) {
  if (outer_ == nullptr) current_batch = this;
}

ReplyBatch::~ReplyBatch() {
  if (outer_ != nullptr) return;  // the outer batch flushes
  // A flush may deliver answers that defer more streams (it never does
  // today, but nothing forbids it): keep going until none is left.
  while (!deferred_.empty()) {
    absl::InlinedVector<Flushable*, 16> streams;
    streams.swap(deferred_);
    for (Flushable* stream : streams) {
      stream->FlushReplies();
      stream->Unref();
    }
  }
  current_batch = nullptr;
}

ReplyBatch* ReplyBatch::Current() { return current_batch; }

void ReplyBatch::Defer(Flushable* stream) {
  stream->Ref();
  deferred_.push_back(stream);
}

}  // namespace fencegate
