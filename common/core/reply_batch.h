// ReplyBatch: lets a thread that delivers many answers in a row (the
// group-commit writer delivering a batch, a session handling one incoming
// message) send each stream's answers in one message instead of one message
// per answer. While a ReplyBatch is open on a thread, a stream that gets an
// answer on that thread queues it and calls Defer(); the batch flushes each
// deferred stream once when it closes. Without an open batch, the stream
// flushes at once.
//
// Ownership: Defer() takes a reference on the stream (Flushable::Ref) and
// drops it after the flush, so a stream stays alive until then.
//
// Thread safety: a ReplyBatch belongs to the thread that opened it; it is
// never shared. Batches nest: an inner one joins the outer, and the flush
// happens when the outermost closes.
#ifndef FENCEGATE_COMMON_CORE_REPLY_BATCH_H_
#define FENCEGATE_COMMON_CORE_REPLY_BATCH_H_

#include "absl/container/inlined_vector.h"

namespace fencegate {

// A stream whose queued answers a ReplyBatch flushes.
class Flushable {
 public:
  virtual void Ref() = 0;
  virtual void Unref() = 0;
  // Sends what is queued. Called on the batch's thread, no lock held.
  virtual void FlushReplies() = 0;

 protected:
  ~Flushable() = default;
};

class ReplyBatch {
 public:
  ReplyBatch();
  ~ReplyBatch();
  ReplyBatch(const ReplyBatch&) = delete;
  ReplyBatch& operator=(const ReplyBatch&) = delete;

  // The outermost batch open on this thread, or null.
  static ReplyBatch* Current();

  // Flushes `stream` when the batch closes. A stream defers itself once per
  // batch (it knows whether it is deferred already).
  void Defer(Flushable* stream);

 private:
  ReplyBatch* const outer_;  // the batch open when this one opened
  absl::InlinedVector<Flushable*, 16> deferred_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_REPLY_BATCH_H_
