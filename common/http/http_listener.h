// HttpListener: a small HTTP/1.1 server for what operators and Prometheus
// read (/metrics, the status page), built on Debian's cpp-httplib 0.11.4
// (libcpp-httplib-dev, a compiled library with OpenSSL) and kept apart from
// the gRPC service: its own threads, its own port. Whatever an HTTP client
// does, gRPC calls never wait for it.
//
// What it serves: GET and HEAD of the exact paths in `routes` (a query
// string is parsed and handed over). Any other path: 404. Any other
// method of HTTP (POST, PUT, ...): 405 with "Allow: GET, HEAD", before a
// request body is read. A request line httplib cannot parse (an unknown
// method, a bad version): 400. A request line over 8 KiB: 414. One request
// per connection (the answer says "Connection: close").
//
// Bounds (HttpListenerOptions): `threads` connections are served at once;
// up to `max_queued` more wait for a thread, and beyond that the listener
// stops accepting (the kernel's backlog holds the rest) until one ends.
// Each read and write waits at most `io_timeout`, and a connection lives at
// most `connection_deadline` from accept to close, TLS handshake included:
// a client that sends, or reads, a byte at a time (a slow loris) or goes
// silent (half-open) holds one thread that long at most. At most
// `max_request_bytes` of request line and headers are read. The sockets
// are non-blocking and every wait is a poll() bounded by the deadline.
//
// TLS (tls.cert and tls.key set): the same certificate files as the gRPC
// port; with tls.client_ca, clients must present a certificate that CA
// signed (mutual TLS), as on the gRPC port.
//
// Stop() (and the destructor) stops accepting, shuts down the sockets of
// the connections in progress, so their handlers' reads and writes fail at
// once, and waits for the threads: a request in flight ends cleanly,
// answered or not, within the time its handler takes.
//
// Implementation note: connections are served by overriding
// httplib::Server's virtual process_and_close_socket() (0.11.4's extension
// point, also used by its SSLServer) with a Stream of our own
// (http_stream.h) that keeps the deadline; parsing, routing and the
// response are httplib's.
//
// Thread safety: handlers run on the listener's threads, several at once;
// they must be thread-safe and should be quick. Stop() may be called from
// any thread but one of the handlers.
#ifndef FENCEGATE_COMMON_HTTP_HTTP_LISTENER_H_
#define FENCEGATE_COMMON_HTTP_HTTP_LISTENER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fencegate {

struct HttpTlsFiles {
  std::string cert;       // PEM certificate chain; with `key`, TLS is on
  std::string key;        // its private key
  std::string client_ca;  // set: clients need a certificate it signed
  bool enabled() const { return !cert.empty() || !key.empty(); }
};

struct HttpListenerOptions {
  std::string listen;  // host:port; port 0 picks a free port
  HttpTlsFiles tls;
  int threads = 2;
  size_t max_queued = 16;
  absl::Duration io_timeout = absl::Seconds(2);
  absl::Duration connection_deadline = absl::Seconds(10);
  size_t max_request_bytes = 16 << 10;
};

struct HttpRequest {
  std::string path;  // without the query string
  bool head = false;
  std::map<std::string, std::string> query;  // decoded; the first of repeats

  // The query parameter `name`, or `otherwise`.
  std::string Query(const std::string& name, const std::string& otherwise = "") const {
    auto it = query.find(name);
    return it == query.end() ? otherwise : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpListener {
 public:
  // Listens and starts serving `routes` (exact path -> handler). UNAVAILABLE
  // if it cannot listen, a port another process listens on included (no
  // SO_REUSEPORT: two listeners never share a port); INVALID_ARGUMENT for options that cannot work or
  // TLS files that do not load (naming the file).
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(
      HttpListenerOptions options, std::map<std::string, HttpHandler> routes);
  ~HttpListener();  // Stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  int port() const;
  // See the header. Idempotent.
  void Stop();

  class Impl;

 private:
  explicit HttpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_HTTP_HTTP_LISTENER_H_
