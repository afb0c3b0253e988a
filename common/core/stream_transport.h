// StreamTransport: what a server's stream session (stream_session.h) needs
// from its bidirectional stream, without gRPC: ask for the next message,
// send one, end the stream. stream_reactor.h implements it over gRPC's
// callback API; the tests and the fuzz targets implement it in memory
// (tests/testing/stream_harness.h).
//
// The rules a session keeps, as gRPC's reactor needs them: one read at a
// time (the next is asked for only after the last one's message was
// handled), one write at a time, Finish() once, never while a write is in
// progress, and nothing after it.
//
// Thread safety: a session calls the transport with its own lock held, so
// an implementation must not call back into the session synchronously.
#ifndef FENCEGATE_COMMON_CORE_STREAM_TRANSPORT_H_
#define FENCEGATE_COMMON_CORE_STREAM_TRANSPORT_H_

#include <string>

#include "absl/status/status.h"

namespace fencegate {

class StreamTransport {
 public:
  virtual ~StreamTransport() = default;
  // Asks for the next message: the session's OnMessage() or OnReadsDone()
  // follows, once.
  virtual void StartRead() = 0;
  // Sends one message: the session's OnWriteDone() follows, once. One at a
  // time.
  virtual void StartWrite(std::string bytes) = 0;
  // Ends the stream. Called once, never while a write is in progress;
  // neither StartRead() nor StartWrite() follows.
  virtual void Finish(const absl::Status& status) = 0;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STREAM_TRANSPORT_H_
