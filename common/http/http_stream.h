// DeadlineStream: one HTTP connection as an httplib::Stream, plain or over
// TLS, whose every read and write waits (poll) at most the I/O timeout and
// never past the connection's deadline, and which reads at most a set
// number of bytes. HttpListener (http_listener.h) serves each connection
// through one.
//
// The socket is made non-blocking; a wait that runs out, a peer that
// closes, a socket shut down by HttpListener::Stop(), or the byte budget
// spent make read()/write() return -1 (or 0 at the peer's end of stream),
// and httplib then drops the connection.
//
// Ownership: the stream does not own the socket (the listener closes it);
// it owns its SSL object, if any. Thread safety: one thread at a time.
#ifndef FENCEGATE_COMMON_HTTP_HTTP_STREAM_H_
#define FENCEGATE_COMMON_HTTP_HTTP_STREAM_H_

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "httplib.h"
#include "openssl/ssl.h"

namespace fencegate {

class DeadlineStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // `ssl_context` null: plaintext.
  DeadlineStream(int fd, SSL_CTX* ssl_context, Clock::time_point deadline,
                 Clock::duration io_timeout, size_t max_read_bytes);
  ~DeadlineStream() override;

  // TLS: the handshake (OK at once without TLS). An error says why; then
  // nothing else may be called but the destructor.
  absl::Status Handshake();
  // TLS: sends close_notify, without waiting for the peer's.
  void Close();

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  // Polls for `events` up to the I/O timeout, never past the deadline.
  bool Wait(short events) const;
  // One recv() or SSL_read() into buffer_; false at end, error or timeout.
  bool Fill();

  const int fd_;
  const bool tls_;
  SSL* ssl_ = nullptr;  // TLS: set by the constructor (null if SSL_new failed)
  const Clock::time_point deadline_;
  const Clock::duration io_timeout_;
  size_t read_budget_;
  char buffer_[4096];
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_HTTP_HTTP_STREAM_H_
