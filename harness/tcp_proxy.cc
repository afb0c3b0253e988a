#include "harness/tcp_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <list>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fencegate::testing {
namespace {

// One forwarded connection: `in` was accepted, `out` goes to the target.
// Each direction buffers at most one read; a side is read only when the
// bytes read from it before have all been written on.
struct Link {
  int in = -1;
  int out = -1;
  std::string in_to_out;
  std::string out_to_in;
  bool broken = false;
};

void CloseLink(Link& link) {
  close(link.in);
  close(link.out);
}

sockaddr_in Loopback(int port) {
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

// Connects to the target; -1 on failure. Blocking: it is on this host.
int ConnectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr = Loopback(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Moves bytes from `from` into `buffer` when readable, and from `buffer`
// to `to` when writable. Marks the link broken on EOF or error.
void Pump(const pollfd& from_poll, const pollfd& to_poll, int from, int to,
          std::string& buffer, bool& broken) {
  if (from_poll.revents & (POLLIN | POLLHUP | POLLERR)) {
    char data[16384];
    const ssize_t n = read(from, data, sizeof(data));
    if (n > 0) {
      buffer.append(data, n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      broken = true;
    }
  }
  if (!buffer.empty() && (to_poll.revents & (POLLOUT | POLLERR | POLLHUP))) {
    const ssize_t n = send(to, buffer.data(), buffer.size(), MSG_NOSIGNAL);
    if (n > 0) {
      buffer.erase(0, n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      broken = true;
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int target_port) {
  std::unique_ptr<TcpProxy> proxy(new TcpProxy());
  proxy->target_port_ = target_port;
  proxy->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  if (proxy->listen_fd_ < 0 ||
      bind(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(proxy->listen_fd_, 64) != 0 ||
      getsockname(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(proxy->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("proxy: cannot listen: ", strerror(errno)));
  }
  proxy->port_ = ntohs(addr.sin_port);
  proxy->thread_ = std::thread([p = proxy.get()] { p->Run(); });
  return proxy;
}

TcpProxy::~TcpProxy() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_pipe_[0], wake_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
}

std::string TcpProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

void TcpProxy::Wake() { (void)!write(wake_pipe_[1], "x", 1); }

void TcpProxy::Cut() {
  absl::MutexLock lock(&mu_);
  cut_ = true;
  const int request = ++cut_requests_;
  Wake();
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cuts_done_ >= request || stopping_;
  };
  mu_.Await(absl::Condition(&done));
}

void TcpProxy::Heal() {
  absl::MutexLock lock(&mu_);
  cut_ = false;
}

void TcpProxy::Run() {
  std::list<Link> links;
  for (;;) {
    bool cut;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      if (cuts_done_ < cut_requests_) {
        for (Link& link : links) CloseLink(link);
        links.clear();
        cuts_done_ = cut_requests_;
      }
      cut = cut_;
    }
    std::vector<pollfd> polls = {{wake_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Link& link : links) {
      polls.push_back({link.in,
                       static_cast<short>((link.in_to_out.empty() ? POLLIN : 0) |
                                          (link.out_to_in.empty() ? 0 : POLLOUT)),
                       0});
      polls.push_back({link.out,
                       static_cast<short>((link.out_to_in.empty() ? POLLIN : 0) |
                                          (link.in_to_out.empty() ? 0 : POLLOUT)),
                       0});
    }
    if (poll(polls.data(), polls.size(), -1) < 0) continue;  // EINTR
    if (polls[0].revents & POLLIN) {
      char drain[64];
      while (read(wake_pipe_[0], drain, sizeof(drain)) > 0) {
      }
      continue;  // look at stopping_ and cut requests first
    }
    size_t i = 2;
    for (Link& link : links) {
      const pollfd& in = polls[i++];
      const pollfd& out = polls[i++];
      Pump(in, out, link.in, link.out, link.in_to_out, link.broken);
      Pump(out, in, link.out, link.in, link.out_to_in, link.broken);
    }
    links.remove_if([](Link& link) {
      if (link.broken) CloseLink(link);
      return link.broken;
    });
    if (polls[1].revents & POLLIN) {
      const int in = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (in >= 0) {
        const int out = cut ? -1 : ConnectTo(target_port_);
        if (out < 0) {
          close(in);  // partitioned (or the target is down): refuse
        } else {
          Link link;
          link.in = in;
          link.out = out;
          links.push_back(std::move(link));
        }
      }
    }
  }
  for (Link& link : links) CloseLink(link);
}

}  // namespace fencegate::testing
