// ResponseStream: the writing end of one server stream (one request, a
// stream of responses) as the code that produces its messages sees it,
// whichever gRPC API carries the stream: a completion-queue loop's
// (cq_write_stream.h) or the callback API's (callback_response_stream.h).
// The producer answers with ResponseStreamEvents, told what becomes of
// the stream.
//
// The contract, the callback API's own: one write at a time, started only
// after the last one's OnWriteDone; Finish() once, with no write in
// flight; OnDone() last, after the finish is back, and then neither side
// is touched again.
//
// Thread safety: StartWrite() and Finish() from any thread; the events run
// on the transport's threads (the loop's, or gRPC's callback threads), one
// at a time per stream.
#ifndef FENCEGATE_COMMON_SERVER_RESPONSE_STREAM_H_
#define FENCEGATE_COMMON_SERVER_RESPONSE_STREAM_H_

#include "grpcpp/support/status.h"

namespace fencegate {

template <typename Response>
class ResponseStream {
 public:
  // Starts writing `message`, which must live until OnWriteDone.
  virtual void StartWrite(const Response* message) = 0;
  // Ends the stream with `status`.
  virtual void Finish(const grpc::Status& status) = 0;

 protected:
  ~ResponseStream() = default;
};

// What the transport tells the producer. Ownership: the producer's; it
// may delete itself in OnDone().
class ResponseStreamEvents {
 public:
  // The write is over; false: it failed (the client is gone).
  virtual void OnWriteDone(bool ok) = 0;
  // The client went away, or the server is shutting down: finish soon.
  virtual void OnCancel() = 0;
  // The finish is back; the last event.
  virtual void OnDone() = 0;

 protected:
  ~ResponseStreamEvents() = default;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_RESPONSE_STREAM_H_
