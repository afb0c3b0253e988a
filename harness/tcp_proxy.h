// TcpProxy: a network link that can be cut. It listens on 127.0.0.1 (a
// free port) and forwards every connection to a target port. Cut() drops
// every connection and refuses new ones, as a network partition would
// between whoever connects through it and the target; Heal() forwards
// again. The demo and the end-to-end tests put one between client 1 and
// the lock service, so that client 1 alone is cut off while everyone else
// still reaches the service.
//
// Thread safety: thread-safe. One thread moves the bytes; the destructor
// stops it and closes every socket.
#ifndef FENCEGATE_HARNESS_TCP_PROXY_H_
#define FENCEGATE_HARNESS_TCP_PROXY_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace fencegate::testing {

class TcpProxy {
 public:
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>"

  // Closes every forwarded connection and refuses new ones until Heal().
  // When Cut() returns, no byte moves through the proxy any more.
  void Cut();
  void Heal();

 private:
  TcpProxy() = default;
  void Run();
  void Wake();

  int port_ = 0;
  int target_port_ = 0;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::thread thread_;

  absl::Mutex mu_;
  bool cut_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Bumped by Cut(); the thread acknowledges it once all links are closed.
  int cut_requests_ ABSL_GUARDED_BY(mu_) = 0;
  int cuts_done_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_TCP_PROXY_H_
