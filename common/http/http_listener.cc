#include "common/http/http_listener.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/http/http_stream.h"
#include "httplib.h"
#include "openssl/err.h"
#include "openssl/ssl.h"

namespace fencegate {
namespace {

// SIGPIPE is synchronous: blocked in the listener's threads, a write to a
// peer that went away fails with EPIPE instead of killing the process
// (SSL_write writes without MSG_NOSIGNAL).
void BlockSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// `threads` workers; at most `max_queued` connections wait for one, and
// enqueue() (the accept loop) waits while that many do. Every connection
// ends by its deadline, so the wait is bounded.
class BoundedTaskQueue final : public httplib::TaskQueue {
 public:
  BoundedTaskQueue(int threads, size_t max_queued) : max_queued_(max_queued) {
    for (int i = 0; i < threads; ++i) {
      workers_.emplace_back([this] {
        pthread_setname_np(pthread_self(), "fg-http");
        BlockSigpipe();
        Work();
      });
    }
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait(lock, [this] { return jobs_.size() < max_queued_; });
    jobs_.push_back(std::move(fn));
    work_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and every connection served
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        space_.notify_one();
      }
      fn();
    }
  }

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable work_;
  std::condition_variable space_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// "host:port" split; "[::1]:80" gives "::1".
bool SplitHostPort(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return absl::SimpleAtoi(listen.substr(colon + 1), port) && *port >= 0 && *port <= 65535;
}

std::string SslError() {
  char text[256] = "unknown error";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, text, sizeof(text));
  return text;
}

absl::StatusOr<SSL_CTX*> NewSslContext(const HttpTlsFiles& tls) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return absl::InternalError("cannot make a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  absl::Status error;
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert.c_str()) != 1) {
    error = absl::InvalidArgumentError(
        absl::StrCat("--tls_cert ", tls.cert, " does not load: ", SslError()));
  } else if (SSL_CTX_use_PrivateKey_file(ctx, tls.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
             SSL_CTX_check_private_key(ctx) != 1) {
    error = absl::InvalidArgumentError(
        absl::StrCat("--tls_key ", tls.key,
                     " does not load or does not match --tls_cert: ", SslError()));
  } else if (!tls.client_ca.empty()) {
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca.c_str());
    if (names == nullptr ||
        SSL_CTX_load_verify_locations(ctx, tls.client_ca.c_str(), nullptr) != 1) {
      error = absl::InvalidArgumentError(absl::StrCat("--tls_client_ca ", tls.client_ca,
                                                      " does not load: ", SslError()));
    } else {
      SSL_CTX_set_client_CA_list(ctx, names);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
  }
  if (!error.ok()) {
    SSL_CTX_free(ctx);
    return error;
  }
  return ctx;
}

}  // namespace

class HttpListener::Impl {
 public:
  Impl(HttpListenerOptions options, std::map<std::string, HttpHandler> routes,
       SSL_CTX* ssl)
      : options_(std::move(options)),
        routes_(std::move(routes)),
        ssl_(ssl),
        server_(this) {}
  ~Impl() {
    Stop();
    if (ssl_ != nullptr) SSL_CTX_free(ssl_);
  }

  absl::Status Start();
  void Stop();
  int port() const { return port_; }

 private:
  // The httplib server whose connections go through DeadlineStream.
  class Server final : public httplib::Server {
   public:
    explicit Server(Impl* impl) : impl_(impl) {}

   private:
    bool process_and_close_socket(socket_t sock) override;
    Impl* const impl_;
  };

  // Registers a connection's socket for Stop(); false once stopping.
  bool Track(int fd);
  void Untrack(int fd);
  httplib::Server::HandlerResponse Route(const httplib::Request& req,
                                         httplib::Response& res);

  const HttpListenerOptions options_;
  const std::map<std::string, HttpHandler> routes_;
  SSL_CTX* const ssl_;  // null: plaintext
  Server server_;
  int port_ = 0;
  std::thread thread_;

  std::mutex mu_;
  bool stopping_ = false;  // guarded by mu_
  std::set<int> open_;     // guarded by mu_: connections being served
};

bool HttpListener::Impl::Server::process_and_close_socket(socket_t sock) {
  bool ok = false;
  if (impl_->Track(sock)) {
    const HttpListenerOptions& o = impl_->options_;
    DeadlineStream stream(
        sock, impl_->ssl_,
        DeadlineStream::Clock::now() + absl::ToChronoNanoseconds(o.connection_deadline),
        absl::ToChronoNanoseconds(o.io_timeout), o.max_request_bytes);
    if (stream.Handshake().ok()) {
      bool closed = true;
      ok = process_request(stream, /*close_connection=*/true, closed, nullptr);
      stream.Close();
    }
    impl_->Untrack(sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

bool HttpListener::Impl::Track(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  open_.insert(fd);
  return true;
}

void HttpListener::Impl::Untrack(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(fd);
}

httplib::Server::HandlerResponse HttpListener::Impl::Route(const httplib::Request& req,
                                                           httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  // Nothing from elsewhere, no script: the pages are self-contained.
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; style-src 'unsafe-inline'");
  auto route = routes_.find(req.path);
  if (route == routes_.end()) {
    res.status = 404;
    res.set_content(absl::StrCat("no page at ", req.path, "; try / or /metrics\n"),
                    "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  }
  const bool head = req.method == "HEAD";
  if (req.method != "GET" && !head) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content(absl::StrCat(req.method, " is not allowed here: only GET and HEAD\n"),
                    "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  }
  HttpRequest request;
  request.path = req.path;
  request.head = head;
  for (const auto& [name, value] : req.params) request.query.emplace(name, value);
  HttpResponse response = route->second(request);
  res.status = response.status;
  res.set_content(std::move(response.body), response.content_type.c_str());
  return httplib::Server::HandlerResponse::Handled;
}

absl::Status HttpListener::Impl::Start() {
  std::string host;
  int port = 0;
  if (!SplitHostPort(options_.listen, &host, &port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics_listen='", options_.listen,
        "' is not host:port (port 0 picks a free port; empty turns metrics off)"));
  }
  server_.new_task_queue = [this] {
    return new BoundedTaskQueue(options_.threads, options_.max_queued);
  };
  server_.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        return Route(req, res);
      });
  // httplib's default also sets SO_REUSEPORT, which lets a second process
  // listen on the same port and take half of its scrapes. SO_REUSEADDR
  // alone lets a restart bind while old connections are in TIME_WAIT.
  server_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_.set_payload_max_length(options_.max_request_bytes);
  server_.set_keep_alive_max_count(1);
  const auto io = absl::ToChronoMicroseconds(options_.io_timeout);
  server_.set_read_timeout(io);
  server_.set_write_timeout(io);
  if (port == 0) {
    port_ = server_.bind_to_any_port(host);
  } else {
    port_ = server_.bind_to_port(host, port) ? port : -1;
  }
  if (port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options_.listen,
        " for metrics; is the address valid and the port free? (--metrics_listen)"));
  }
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fg-http-accept");
    BlockSigpipe();
    server_.listen_after_bind();
  });
  // stop() only stops a server that is running: wait until it is.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_.is_running() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // start-up only
  }
  if (!server_.is_running()) {
    return absl::InternalError("the metrics listener's thread did not start");
  }
  return absl::OkStatus();
}

void HttpListener::Impl::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    // Reads and writes of the connections in progress fail at once; the
    // workers close the sockets (so no descriptor is reused under them).
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    HttpListenerOptions options, std::map<std::string, HttpHandler> routes) {
  if (options.threads < 1 || options.max_queued < 1 || options.max_request_bytes < 1024 ||
      options.io_timeout <= absl::ZeroDuration() ||
      options.connection_deadline < options.io_timeout) {
    return absl::InvalidArgumentError(
        "HTTP listener: threads and max_queued must be at least 1, max_request_bytes at "
        "least 1024, and the connection deadline at least the I/O timeout");
  }
  if (options.tls.enabled() && (options.tls.cert.empty() || options.tls.key.empty())) {
    return absl::InvalidArgumentError("TLS needs both --tls_cert and --tls_key");
  }
  SSL_CTX* ssl = nullptr;
  if (options.tls.enabled()) {
    absl::StatusOr<SSL_CTX*> context = NewSslContext(options.tls);
    if (!context.ok()) return context.status();
    ssl = *context;
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(routes), ssl);
  if (absl::Status started = impl->Start(); !started.ok()) return started;
  return std::unique_ptr<HttpListener>(new HttpListener(std::move(impl)));
}

HttpListener::HttpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpListener::~HttpListener() { Stop(); }
int HttpListener::port() const { return impl_->port(); }
void HttpListener::Stop() { impl_->Stop(); }

}  // namespace fencegate
