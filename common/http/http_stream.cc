#include "common/http/http_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "openssl/err.h"

namespace fencegate {
namespace {

void Address(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

}  // namespace

DeadlineStream::DeadlineStream(int fd, SSL_CTX* ssl_context, Clock::time_point deadline,
                               Clock::duration io_timeout, size_t max_read_bytes)
    : fd_(fd),
      tls_(ssl_context != nullptr),
      deadline_(deadline),
      io_timeout_(io_timeout),
      read_budget_(max_read_bytes) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  if (ssl_context != nullptr) {
    ssl_ = SSL_new(ssl_context);
    if (ssl_ != nullptr) {
      SSL_set_fd(ssl_, fd_);
      SSL_set_mode(ssl_,
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    }
  }
}

DeadlineStream::~DeadlineStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool DeadlineStream::Wait(short events) const {
  const Clock::duration left = deadline_ - Clock::now();
  if (left <= Clock::duration::zero()) return false;
  const auto wait =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::min(left, io_timeout_));
  pollfd p{fd_, events, 0};
  int n;
  do {
    n = poll(&p, 1, static_cast<int>(std::max<int64_t>(1, wait.count())));
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

absl::Status DeadlineStream::Handshake() {
  if (!tls_) return absl::OkStatus();
  if (ssl_ == nullptr)
    return absl::InternalError("cannot make a TLS connection (SSL_new)");
  for (;;) {
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) return absl::OkStatus();
    const int error = SSL_get_error(ssl_, r);
    if (error == SSL_ERROR_WANT_READ && Wait(POLLIN)) continue;
    if (error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT)) continue;
    char reason[256] = "timed out or closed";
    if (unsigned long e = ERR_peek_last_error())
      ERR_error_string_n(e, reason, sizeof(reason));
    return absl::UnavailableError(absl::StrCat("TLS handshake failed: ", reason));
  }
}

void DeadlineStream::Close() {
  if (ssl_ != nullptr) SSL_shutdown(ssl_);  // close_notify; not waiting for the peer's
}

bool DeadlineStream::is_readable() const { return begin_ < end_ || Wait(POLLIN); }

bool DeadlineStream::is_writable() const { return Wait(POLLOUT); }

bool DeadlineStream::Fill() {
  begin_ = end_ = 0;
  const size_t want = std::min(sizeof(buffer_), read_budget_);
  if (want == 0) return false;  // the request is larger than allowed
  for (;;) {
    ssize_t n;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      n = SSL_read(ssl_, buffer_, static_cast<int>(want));
      if (n <= 0) {
        const int error = SSL_get_error(ssl_, static_cast<int>(n));
        if (error == SSL_ERROR_WANT_READ && Wait(POLLIN)) continue;
        if (error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT)) continue;
        return false;
      }
    } else {
      n = recv(fd_, buffer_, want, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLIN)) continue;
      if (n <= 0) return false;
    }
    end_ = static_cast<size_t>(n);
    read_budget_ -= end_;
    return true;
  }
}

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (begin_ == end_ && !Fill()) return -1;
  const size_t n = std::min(size, end_ - begin_);
  std::memcpy(ptr, buffer_ + begin_, n);
  begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  if (size == 0) return 0;
  for (;;) {
    ssize_t n;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 20)));
      if (n > 0) return n;
      const int error = SSL_get_error(ssl_, static_cast<int>(n));
      if (error == SSL_ERROR_WANT_WRITE && Wait(POLLOUT)) continue;
      if (error == SSL_ERROR_WANT_READ && Wait(POLLIN)) continue;
      return -1;
    }
    n = send(fd_, ptr, size, MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && Wait(POLLOUT)) continue;
    return -1;
  }
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = 0;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    Address(addr, ip, port);
  }
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  port = 0;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    Address(addr, ip, port);
  }
}

}  // namespace fencegate
