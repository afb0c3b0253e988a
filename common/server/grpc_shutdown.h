// A gRPC server's shutdown that waits for what is in flight and for nothing
// else. grpc::Server::Shutdown(deadline) completes only once every
// connection is gone, and a client that merely keeps an idle channel open
// (every client library does) holds it until the deadline: a SIGTERM then
// took the whole --shutdown_grace with nothing to finish.
//
// UnaryCallCounter counts the server's unary calls from the moment gRPC
// hands one to the service until its status is sent (an interceptor,
// installed by StartGrpcServer). ShutdownGrpcServer() stops taking calls,
// waits until none is in flight or `deadline` passes, and then cancels
// whatever is left and closes every connection at once. Streams are not
// waited for here: each server ends its own (Session streams, WatchFences,
// parked Acquires: UNAVAILABLE "shutting down") before it calls this.
//
// A client may still be writing on a Session stream the server has just
// ended: it stops once it has read the final status. A connection closed
// while bytes it sent lie unread is reset (TCP), and a client that had not
// yet read the status then sees its own write fail ("Broken pipe")
// instead. So when the server ended Session streams, it first lingers, for
// up to kLingerAfterEndedStreams (never past `deadline`), while the clients
// read their statuses and gRPC reads and drops what they sent meanwhile;
// the linger ends early if every client closes its connection. nginx's
// lingering close does the same for HTTP.
//
// Thread safety: UnaryCallCounter is thread-safe; ShutdownGrpcServer() is
// called once, from the thread that stops the server.
#ifndef FENCEGATE_COMMON_SERVER_GRPC_SHUTDOWN_H_
#define FENCEGATE_COMMON_SERVER_GRPC_SHUTDOWN_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "grpcpp/support/server_interceptor.h"

namespace fencegate {

class UnaryCallCounter {
 public:
  // An interceptor factory that counts this server's unary calls here. The
  // counter must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewFactory();

  int in_flight() const;
  // True once no unary call is in flight; false if some still are at
  // `deadline`.
  bool AwaitNone(absl::Time deadline) const;

  // For the interceptor.
  void Started();
  void Ended();

 private:
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

// How long a shutdown that ended Session streams lingers before it closes
// their connections (above).
inline constexpr absl::Duration kLingerAfterEndedStreams = absl::Seconds(1);

// See the header comment. `calls` must be the counter the server was
// started with; `linger` is kLingerAfterEndedStreams if the server ended
// Session streams, else zero.
void ShutdownGrpcServer(grpc::Server& server, const UnaryCallCounter& calls,
                        absl::Time deadline, absl::Duration linger);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_GRPC_SHUTDOWN_H_
