// StreamRegistry knows the live sessions of a server (stream_session.h), on
// whichever transport (stream_reactor.h on gRPC's callback API, cq_stream.h
// on its completion queue), so that a shutdown can end them cleanly
// (StreamSession::Close, or their LockManager for the lock service's)
// instead of letting them run into the server's grace deadline, and then
// wait until every one has ended before gRPC closes the connections
// (AwaitEnded). It also bounds them (--max_sessions): a stream that starts
// while max_sessions are live is closed at once with RESOURCE_EXHAUSTED
// naming the flag and the limit (common/core/stream_quota.h), before its
// session handles a message, and is not listed. Optional: a stream without
// one is neither bounded nor ended before the server's grace deadline.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_COMMON_SERVER_STREAM_REGISTRY_H_
#define FENCEGATE_COMMON_SERVER_STREAM_REGISTRY_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/core/stream_quota.h"
#include "common/core/stream_session.h"

namespace fencegate {

class StreamRegistry {
 public:
  // At most `max_sessions` live sessions. REQUIRES: max_sessions >= 1.
  explicit StreamRegistry(size_t max_sessions);

  // Closes every live session, and every one that starts later, with
  // `status`: each answers what it has read, then ends with it.
  void CloseAll(const absl::Status& status);

  // How many sessions are live now.
  size_t live();

  // Waits until every session has ended: its final status handed to gRPC
  // and its reactor done. False (and a warning logged) if some were still
  // live at `deadline`.
  //
  // Why a shutdown waits: gRPC closes a connection as soon as its last
  // stream ends after the server's final GOAWAY, and ShutdownGrpcServer
  // closes the rest. A session that ends later than that (it waits for its
  // last commit) would have its connection closed while the client, which
  // has not yet read the final status, is still sending; those unread
  // bytes make the close a TCP reset, and the client may then see "Broken
  // pipe" instead of the status and the answers before it. Ended first,
  // the sessions' last bytes are on their way before any connection
  // closes, and ShutdownGrpcServer lingers while the clients read them
  // (common/server/grpc_shutdown.h).
  bool AwaitEnded(absl::Time deadline);

 private:
  friend class StreamReactor;  // the transports add and remove their sessions
  friend class CqStream;
  // Adds `session`; false (and nothing added) once CloseAll() has run, or
  // while max_sessions are live, and then *status is the status to close it
  // with.
  bool Add(StreamSession* session, absl::Status* status);
  void Remove(StreamSession* session);

  StreamQuota quota_;  // counts sessions_
  absl::Mutex mu_;
  absl::flat_hash_set<StreamSession*> sessions_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_STREAM_REGISTRY_H_
