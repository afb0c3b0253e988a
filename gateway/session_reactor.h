// SessionReactor: the Gateway Session RPC over gRPC's callback API. A
// ServerBidiReactor on raw bytes (grpc::ByteBuffer) that carries a Session
// (session.h): the session parses the messages itself, so a message that
// does not parse is answered (INVALID_ARGUMENT for the requests in it)
// instead of looking like the client's end of stream, which is all gRPC's
// typed reactor would report; and answers go out as the bytes the session
// encoded, without another copy.
//
// SessionRegistry knows every live session of a server, so that a shutdown
// can end them cleanly (Session::Close) instead of letting them run into
// the server's grace deadline.
//
// Ownership: gRPC drives the reactor; it deletes itself in OnDone(). The
// session outlives it while the store still holds its calls.
// Thread safety: gRPC's rules for reactors; the registry is thread-safe.
#ifndef FENCEGATE_GATEWAY_SESSION_REACTOR_H_
#define FENCEGATE_GATEWAY_SESSION_REACTOR_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "gateway/fenced_store.h"
#include "gateway/session.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"

namespace fencegate::gateway {

class SessionReactor;

class SessionRegistry {
 public:
  // Closes every live session and every one that starts later with
  // UNAVAILABLE: each answers what it has read, then ends.
  void CloseAll();

 private:
  friend class SessionReactor;
  // Adds `session`; false (and nothing added) once CloseAll() has run.
  bool Add(Session* session);
  void Remove(Session* session);

  absl::Mutex mu_;
  absl::flat_hash_set<Session*> sessions_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

class SessionReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SessionReactor(FencedStore* store, const SessionLimits& limits, SessionRegistry* registry);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // The session's view of this stream.
  class Transport final : public SessionTransport {
   public:
    explicit Transport(SessionReactor* reactor) : reactor_(reactor) {}
    void StartRead() override;
    void StartWrite(std::string bytes) override;
    void Finish(const absl::Status& status) override;

   private:
    SessionReactor* const reactor_;
  };

  SessionRegistry* const registry_;
  Transport transport_{this};
  grpc::ByteBuffer in_;   // the message being read
  grpc::ByteBuffer out_;  // the message being written
  Session* session_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SESSION_REACTOR_H_
