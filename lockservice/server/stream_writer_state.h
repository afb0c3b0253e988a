// StreamWriterState: what a server stream's writer (fence_watch.cc,
// election_watch.cc) shares between gRPC's reactions and the thread that
// produces its messages: whether a write is in flight, and whether, and
// with what status, the stream is to finish. One message is in flight at a
// time; whoever sets `writing_` owns the next write, and the stream
// finishes only once no write is owned, so the reactor is alive for every
// call made on it.
//
// Derived (CRTP, no virtual calls) defines Pump(), which decides the next
// step under `mu_` (starting with NextStep()) and takes it outside the
// lock; WriteDone() and End() run it.
//
// Thread safety: thread-safe; all state is under `mu_`, which Derived
// shares and must not hold while calling into gRPC.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_STREAM_WRITER_STATE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_STREAM_WRITER_STATE_H_

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/status.h"

namespace fencegate::lockservice {

template <typename Derived>
class StreamWriterState {
 public:
  // From the reactor's OnWriteDone: the write is over; a failed one ends
  // the stream.
  void WriteDone(bool ok) {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) RequestFinish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
    }
    static_cast<Derived*>(this)->Pump();
  }

  // Ends the stream with `status` (unless it is ending already) once no
  // write is in flight.
  void End(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      RequestFinish(std::move(status));
    }
    static_cast<Derived*>(this)->Pump();
  }

 protected:
  StreamWriterState() = default;
  ~StreamWriterState() = default;

  enum class Step {
    kWait,    // finished, or a write is owned: nothing to do now
    kFinish,  // finish with final_status_, outside the lock
    kFree,    // no write in flight: the caller may set writing_ and write
  };
  // Pump's first decision; kFinish marks the stream finished.
  Step NextStep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_) return Step::kWait;
    if (!finish_requested_) return Step::kFree;
    finished_ = true;
    return Step::kFinish;
  }

  // The first status asked for wins.
  void RequestFinish(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finish_requested_) return;
    finish_requested_ = true;
    final_status_ = std::move(status);
  }

  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_;  // written before finished_, read after

 private:
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_STREAM_WRITER_STATE_H_
