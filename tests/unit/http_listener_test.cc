// HttpListener (common/http/http_listener.h) on loopback: routing, the
// refused methods and paths, and the bounds: a client that goes silent
// (half-open) or trickles its request (slow loris) is cut at the
// connection deadline while others are served, an oversized request is
// dropped, and Stop() ends a connection in progress at once.
#include "common/http/http_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace fencegate {
namespace {

using ::testing::HasSubstr;

// A raw TCP connection to the listener, for clients that misbehave.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{30, 0};  // a read never hangs the test
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Everything until the server closes (or 30 s pass).
  std::string ReadAll() {
    std::string all;
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd_, buf, sizeof(buf), 0)) > 0) all.append(buf, n);
    return all;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

class HttpListenerTest : public ::testing::Test {
 protected:
  void Start(HttpListenerOptions options = {}) {
    options.listen = "127.0.0.1:0";
    std::map<std::string, HttpHandler> routes;
    routes["/hello"] = [this](const HttpRequest& request) {
      ++calls_;
      HttpResponse response;
      response.body = absl::StrCat("hello ", request.Query("name", "nobody"),
                                   request.head ? " (head)" : "");
      return response;
    };
    absl::StatusOr<std::unique_ptr<HttpListener>> listener =
        HttpListener::Start(options, std::move(routes));
    ASSERT_TRUE(listener.ok()) << listener.status();
    listener_ = *std::move(listener);
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", listener_->port());
    client.set_read_timeout(10, 0);
    return client;
  }

  std::atomic<int> calls_{0};
  std::unique_ptr<HttpListener> listener_;
};

TEST_F(HttpListenerTest, ServesGetAndHeadOfItsRoutes) {
  Start();
  httplib::Client client = Client();
  httplib::Result get = client.Get("/hello?name=a%20b");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, "hello a b");
  EXPECT_EQ(get->get_header_value("Connection"), "close");
  EXPECT_THAT(get->get_header_value("Content-Security-Policy"),
              HasSubstr("default-src 'none'"));
  httplib::Result head = client.Head("/hello");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
}

TEST_F(HttpListenerTest, UnknownPathsAre404AndOtherMethods405) {
  Start();
  httplib::Client client = Client();
  httplib::Result missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    RawClient raw(listener_->port());
    ASSERT_TRUE(raw.Send(absl::StrCat(method,
                                      " /hello HTTP/1.1\r\nHost: x\r\n"
                                      "Content-Length: 5\r\n\r\nhello")));
    const std::string answer = raw.ReadAll();
    EXPECT_THAT(answer, HasSubstr("HTTP/1.1 405")) << method;
    EXPECT_THAT(answer, HasSubstr("Allow: GET, HEAD")) << method;
  }
  RawClient brew(listener_->port());
  ASSERT_TRUE(brew.Send("BREW /hello HTTP/1.1\r\n\r\n"));
  EXPECT_THAT(brew.ReadAll(), HasSubstr("HTTP/1.1 400"));
  EXPECT_EQ(calls_, 0);  // no handler ran for any of them
}

TEST_F(HttpListenerTest,
       SilentAndTricklingClientsAreCutAtTheDeadlineWhileOthersAreServed) {
  HttpListenerOptions options;
  options.threads = 2;
  options.io_timeout = absl::Milliseconds(400);
  options.connection_deadline = absl::Seconds(1);
  Start(options);
  RawClient silent(listener_->port());
  ASSERT_TRUE(silent.Send("GET /hel"));  // and nothing more: half-open
  const absl::Time start = absl::Now();
  std::atomic<bool> trickled_out{false};
  std::thread loris([&] {
    RawClient slow(listener_->port());
    // One byte every 100 ms: each read succeeds well within io_timeout.
    const std::string request = "GET /hello HTTP/1.1\r\nX-Slow: " + std::string(200, 'x');
    for (char c : request) {
      if (!slow.Send(std::string(1, c))) break;
      absl::SleepFor(absl::Milliseconds(100));  // the client's pace, not a wait
      if (absl::Now() - start > absl::Seconds(15)) break;
    }
    trickled_out = slow.ReadAll().empty();
  });
  // Meanwhile a well-behaved client gets its answer: with both workers
  // held, no later than the first deadline.
  httplib::Client client = Client();
  httplib::Result ok = client.Get("/hello");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(silent.ReadAll(), "");  // closed without an answer
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  loris.join();
  EXPECT_TRUE(trickled_out);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(HttpListenerTest, RequestsLargerThanTheLimitAreNotServed) {
  HttpListenerOptions options;
  options.max_request_bytes = 2048;
  Start(options);
  RawClient raw(listener_->port());
  raw.Send("GET /hello HTTP/1.1\r\nX-Big: " + std::string(8000, 'x') + "\r\n\r\n");
  EXPECT_THAT(raw.ReadAll(), ::testing::Not(HasSubstr("200 OK")));
  EXPECT_EQ(calls_, 0);
}

TEST_F(HttpListenerTest, StopEndsAConnectionInProgressAtOnce) {
  HttpListenerOptions options;
  options.io_timeout = absl::Seconds(30);
  options.connection_deadline = absl::Seconds(60);
  Start(options);
  RawClient silent(listener_->port());
  ASSERT_TRUE(silent.Send("GET /hello HTTP/1.1\r\n"));
  // The request is being read (poll until the server has the connection).
  httplib::Client client = Client();
  ASSERT_TRUE(client.Get("/hello"));
  const absl::Time start = absl::Now();
  listener_->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(silent.ReadAll(), "");
  listener_->Stop();  // idempotent
}

TEST(HttpListenerStartTest, RefusesAnAddressItCannotUse) {
  HttpListenerOptions options;
  options.listen = "no-port";
  absl::StatusOr<std::unique_ptr<HttpListener>> bad = HttpListener::Start(options, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--metrics_listen"));
  options.listen = "127.0.0.1:0";
  options.tls.cert = "/nonexistent/cert.pem";
  options.tls.key = "/nonexistent/key.pem";
  bad = HttpListener::Start(options, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("/nonexistent/cert.pem"));
}

}  // namespace
}  // namespace fencegate
