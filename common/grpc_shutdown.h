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
// Thread safety: UnaryCallCounter is thread-safe; ShutdownGrpcServer() is
// called once, from the thread that stops the server.
#ifndef FENCEGATE_COMMON_GRPC_SHUTDOWN_H_
#define FENCEGATE_COMMON_GRPC_SHUTDOWN_H_

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

// See the header comment. `calls` must be the counter the server was
// started with.
void ShutdownGrpcServer(grpc::Server& server, const UnaryCallCounter& calls,
                        absl::Time deadline);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_GRPC_SHUTDOWN_H_
