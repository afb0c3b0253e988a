// Both real servers' metrics listeners (docs/observability.md), as an
// operator and Prometheus meet them:
//   - /metrics after a workload is what `promtool check metrics` (Debian's
//     prometheus) accepts, and counts what the workload did;
//   - the status page, unknown paths (404) and other methods (405);
//   - half-open HTTP clients holding every listener thread do not slow the
//     gRPC service down, and the listener serves again after its deadline;
//   - SIGTERM while scrapes are in flight and a client is half-open: the
//     server exits 0 promptly, and each scrape was answered whole or cut;
//   - TLS as the gRPC port (mutual TLS: a scrape needs a client
//     certificate); --metrics_listen= turns metrics off, GetMetrics says so;
//   - on etcd (a real single-member etcd), the leader and the standby say
//     which they are, and a hand-over shows in the leadership metrics; on
//     PostgreSQL (a real server), the read connections show.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "harness/test_certificates.h"
#include "fencegate/v1/server_info.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_cluster.h"
#include "tests/testing/http_get.h"
#include "harness/poll.h"
#include "harness/postgres_server.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"

namespace fencegate {
namespace {

using ::fencegate::testing::HttpAnswer;
using ::fencegate::testing::HttpGet;
using ::fencegate::testing::ServerProcess;
using ::testing::HasSubstr;

// promtool's verdict on `text`: OK, or its complaints.
absl::Status PromtoolCheckMetrics(const std::string& text) {
  absl::StatusOr<testing::ProgramResult> result = testing::RunProgram(
      {"/usr/bin/promtool", "check", "metrics"}, absl::Seconds(60), text);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat("promtool check metrics: exit ",
                                            result->exit_code, ": ", result->stdout_text,
                                            result->stderr_text));
  }
  return absl::OkStatus();
}

// A TCP connection to the listener on loopback; -1 if refused or if it
// was not accepted within a second (the listen backlog is full).
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval connect_timeout{1, 0};  // SO_SNDTIMEO bounds connect() on Linux
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &connect_timeout, sizeof(connect_timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A TCP connection that sends part of a request and then nothing.
int HalfOpenConnection(int port) {
  int fd = Connect(port);
  if (fd >= 0) send(fd, "GET /metr", 9, MSG_NOSIGNAL);
  return fd;
}

// Sends `request` whole and returns the answer's status line.
std::string StatusLineOf(int port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "no connection";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string answer;
  char buf[1024];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, n);
  close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void StartServers(std::vector<std::string> lock_args = {},
                    std::vector<std::string> gateway_args = {}) {
    lock_args.push_back("--db=" + dir_.File("locks.db"));
    auto locks = ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN, lock_args, dir_.path(),
                                      "lockservice");
    ASSERT_TRUE(locks.ok()) << locks.status();
    lockservice_ = *std::move(locks);
    gateway_args.push_back("--db=" + dir_.File("gateway.db"));
    gateway_args.push_back("--lockservice=" + lockservice_->address());
    auto gateway =
        ServerProcess::Start(FENCEGATE_GATEWAY_BIN, gateway_args, dir_.path(), "gateway");
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    gateway_ = *std::move(gateway);
  }

  std::string Url(ServerProcess& server) {
    absl::StatusOr<std::string> url = server.MetricsUrl();
    EXPECT_TRUE(url.ok()) << url.status();
    return url.value_or("http://127.0.0.1:1");
  }

  std::string Metrics(ServerProcess& server) {
    absl::StatusOr<HttpAnswer> answer = HttpGet(Url(server), "/metrics");
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) return "";
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(answer->content_type, "text/plain; version=0.0.4; charset=utf-8");
    return answer->body;
  }

  // Leases, a queue, a release, an expiry, and writes: one of them stale.
  void Workload() {
    auto lock = client::LockClient::Connect(lockservice_->address());
    ASSERT_TRUE(lock.ok());
    auto gateway = client::GatewayClient::Connect(gateway_->address());
    ASSERT_TRUE(gateway.ok());
    client::AcquireOptions options;
    options.ttl = absl::Seconds(10);
    auto first = (*lock)->Acquire("orders/1", "worker-1", options);
    ASSERT_TRUE(first.ok() && first->acquired);
    ASSERT_TRUE((*gateway)->Put({"orders/1", first->token, {}}, "k", "v1").ok());
    ASSERT_TRUE((*lock)->Release("orders/1", first->token).ok());
    auto second = (*lock)->Acquire("orders/1", "worker-2", options);
    ASSERT_TRUE(second.ok() && second->acquired);
    ASSERT_TRUE((*gateway)->Put({"orders/1", second->token, {}}, "k", "v2").ok());
    auto stale = (*gateway)->Put({"orders/1", first->token, {}}, "k", "late");
    ASSERT_EQ(stale.status().code(), absl::StatusCode::kAborted) << stale.status();
    auto held = (*lock)->Acquire("orders/1", "worker-3");  // a refused try-lock
    ASSERT_TRUE(held.ok() && !held->acquired);
  }

  testing::TempDir dir_;
  std::unique_ptr<ServerProcess> lockservice_;
  std::unique_ptr<ServerProcess> gateway_;
};

TEST_F(ObservabilityTest, PromtoolAcceptsBothServersMetricsAfterAWorkload) {
  StartServers();
  Workload();
  const std::string lock_metrics = Metrics(*lockservice_);
  EXPECT_TRUE(PromtoolCheckMetrics(lock_metrics).ok())
      << PromtoolCheckMetrics(lock_metrics) << "\n"
      << lock_metrics;
  EXPECT_THAT(lock_metrics,
              HasSubstr("fencegate_lock_grants_total{kind=\"immediate\"} 2\n"));
  EXPECT_THAT(lock_metrics,
              HasSubstr("fencegate_lock_not_granted_total{reason=\"held\"} 1\n"));
  EXPECT_THAT(lock_metrics, HasSubstr("fencegate_lock_releases_total 1\n"));
  EXPECT_THAT(lock_metrics, HasSubstr("fencegate_lock_leases_held 1\n"));
  EXPECT_THAT(lock_metrics, HasSubstr("program=\"fencegate-lockservice\""));
  EXPECT_THAT(lock_metrics,
              HasSubstr("fencegate_grpc_server_handled_total{grpc_service=\""
                        "fencegate.v1.LockService\""));

  // The feed catches up with the lock service (polled: it is its own thread).
  ASSERT_TRUE(testing::PollUntil(
                  [&] {
                    return absl::StrContains(Metrics(*gateway_),
                                             "fencegate_gateway_feed_caught_up 1\n");
                  },
                  absl::Seconds(30), "the gateway's feed catching up")
                  .ok());
  const std::string gateway_metrics = Metrics(*gateway_);
  EXPECT_TRUE(PromtoolCheckMetrics(gateway_metrics).ok())
      << PromtoolCheckMetrics(gateway_metrics) << "\n"
      << gateway_metrics;
  EXPECT_THAT(gateway_metrics,
              HasSubstr("fencegate_gateway_stale_refused_total{rpc=\"write\","
                        "class=\"orders\"} 1\n"));
  EXPECT_THAT(
      gateway_metrics,
      HasSubstr("fencegate_gateway_requests_total{rpc=\"write\",result=\"ok\"} 2\n"));
  EXPECT_THAT(gateway_metrics, HasSubstr("fencegate_gateway_requests_total{rpc=\"write\","
                                         "result=\"stale_token\"} 1\n"));
  EXPECT_THAT(gateway_metrics, HasSubstr("fencegate_gateway_feed_positions_behind 0\n"));

  // What a scrape does not count: the refusal's details are on the page.
  absl::StatusOr<HttpAnswer> page = HttpGet(Url(*gateway_), "/");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("<td data-label=\"Resource\">orders/1</td>"));
  absl::StatusOr<HttpAnswer> lock_page =
      HttpGet(Url(*lockservice_), "/?prefix=" + testing::UrlEscape("orders/"));
  ASSERT_TRUE(lock_page.ok());
  EXPECT_THAT(lock_page->body, HasSubstr("<td data-label=\"Holder\">worker-2</td>"));
  EXPECT_TRUE(lockservice_->Terminate().ok());
  EXPECT_TRUE(gateway_->Terminate().ok());
}

TEST_F(ObservabilityTest, UnknownPathsAre404OtherMethods405AndNamesAreEscaped) {
  StartServers();
  auto lock = client::LockClient::Connect(lockservice_->address());
  ASSERT_TRUE(lock.ok());
  ASSERT_TRUE((*lock)->Acquire("<script>alert(1)</script>", "h&\"'").ok());
  for (ServerProcess* server : {lockservice_.get(), gateway_.get()}) {
    absl::StatusOr<HttpAnswer> missing = HttpGet(Url(*server), "/metrics/extra");
    ASSERT_TRUE(missing.ok());
    EXPECT_EQ(missing->status, 404);
    absl::StatusOr<int> port = server->MetricsPort();
    ASSERT_TRUE(port.ok());
    for (const char* method : {"POST", "PUT", "DELETE"}) {
      EXPECT_EQ(StatusLineOf(*port, absl::StrCat(method,
                                                 " /metrics HTTP/1.1\r\nHost: x\r\n"
                                                 "Content-Length: 1\r\n\r\nx")),
                "HTTP/1.1 405 Method Not Allowed")
          << method;
    }
    absl::StatusOr<HttpAnswer> head =
        HttpGet(Url(*server), "/metrics", {}, absl::Seconds(20),
                /*head=*/true);
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(head->status, 200);
    EXPECT_EQ(head->body, "");
  }
  absl::StatusOr<HttpAnswer> page = HttpGet(Url(*lockservice_), "/");
  ASSERT_TRUE(page.ok());
  EXPECT_THAT(page->body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(page->body, HasSubstr("h&amp;&quot;&#39;"));
  EXPECT_THAT(page->body, ::testing::Not(HasSubstr("<script>")));
  absl::StatusOr<HttpAnswer> bad_limit = HttpGet(Url(*lockservice_), "/?limit=0");
  ASSERT_TRUE(bad_limit.ok());
  EXPECT_EQ(bad_limit->status, 400);
}

TEST_F(ObservabilityTest, HalfOpenHttpClientsDoNotStallTheGrpcService) {
  StartServers();
  absl::StatusOr<int> port = lockservice_->MetricsPort();
  ASSERT_TRUE(port.ok());
  // More than the listener's threads (2) and queue (16): every thread is
  // held, the accept loop waits, and the kernel's backlog fills.
  std::vector<int> held;
  for (int i = 0; i < 24; ++i) {
    int fd = HalfOpenConnection(*port);
    if (fd >= 0) held.push_back(fd);
  }
  ASSERT_GE(held.size(), 19u);
  auto lock = client::LockClient::Connect(lockservice_->address());
  ASSERT_TRUE(lock.ok());
  const absl::Time start = absl::Now();
  for (int i = 0; i < 50; ++i) {
    auto grant = (*lock)->Acquire(absl::StrCat("r", i), "h");
    ASSERT_TRUE(grant.ok() && grant->acquired) << grant.status();
    ASSERT_TRUE((*lock)->Release(absl::StrCat("r", i), grant->token).ok());
  }
  // 100 calls with the listener saturated: as quick as without it (well
  // under the listener's 10 s connection deadline, which would show).
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  // Once they go the listener serves again (their deadlines are
  // http_listener_test.cc's).
  for (int fd : held) close(fd);
  absl::StatusOr<HttpAnswer> later =
      HttpGet(Url(*lockservice_), "/metrics", {}, absl::Seconds(60));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->status, 200);
  lock->reset();  // a server waits for open connections when it stops
  EXPECT_TRUE(lockservice_->Terminate().ok());
}

TEST_F(ObservabilityTest, AScrapeDuringShutdownEndsCleanly) {
  StartServers();
  absl::StatusOr<int> port = gateway_->MetricsPort();
  ASSERT_TRUE(port.ok());
  const std::string url = Url(*gateway_);
  const int half_open = HalfOpenConnection(*port);
  std::atomic<bool> stop{false};
  std::atomic<int> whole{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> scrapers;
  for (int t = 0; t < 3; ++t) {
    scrapers.emplace_back([&] {
      while (!stop) {
        absl::StatusOr<HttpAnswer> answer =
            HttpGet(url, "/metrics", {}, absl::Seconds(20));
        if (!answer.ok()) continue;  // refused or cut: the server is going away
        if (answer->status == 200 &&
            absl::StrContains(answer->body, "# TYPE process_open_fds gauge")) {
          ++whole;
        } else {
          ++bad;
        }
      }
    });
  }
  ASSERT_TRUE(testing::PollUntil([&] { return whole > 5; }, absl::Seconds(30),
                                 "scrapes under way")
                  .ok());
  const absl::Time start = absl::Now();
  absl::Status terminated = gateway_->Terminate(absl::Seconds(30));
  const absl::Duration took = absl::Now() - start;
  stop = true;
  for (auto& t : scrapers) t.join();
  close(half_open);
  EXPECT_TRUE(terminated.ok()) << terminated << gateway_->LogTail();
  EXPECT_LT(took, absl::Seconds(8)) << "shutdown waited for an HTTP client";
  EXPECT_EQ(bad, 0);
  EXPECT_THAT(gateway_->LogTail(), HasSubstr("stopped cleanly"));
}

TEST_F(ObservabilityTest, OverMutualTlsAScrapeNeedsAClientCertificate) {
  absl::StatusOr<demo::TestCertificates> certs =
      demo::MakeTestCertificates(dir_.path(), {"prometheus"});
  ASSERT_TRUE(certs.ok()) << certs.status();
  const ServerTlsFiles& s = certs->server;
  std::vector<std::string> tls = {"--tls_cert=" + s.cert, "--tls_key=" + s.key,
                                  "--tls_client_ca=" + s.client_ca};
  auto locks = ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                    {tls[0], tls[1], tls[2], "--db=" + dir_.File("l.db")},
                                    dir_.path(), "lockservice");
  ASSERT_TRUE(locks.ok()) << locks.status();
  absl::StatusOr<int> port = (*locks)->MetricsPort();
  ASSERT_TRUE(port.ok());
  const std::string https = absl::StrCat("https://127.0.0.1:", *port);
  const ClientTlsFiles& prometheus = certs->clients.at("prometheus");
  absl::StatusOr<HttpAnswer> scrape =
      HttpGet(https, "/metrics",
              testing::HttpTls{prometheus.ca, prometheus.cert, prometheus.key});
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_EQ(scrape->status, 200);
  EXPECT_THAT(scrape->body, HasSubstr("fencegate_build_info"));
  // No client certificate: the handshake fails. Plaintext: no answer.
  EXPECT_FALSE(HttpGet(https, "/metrics", testing::HttpTls{prometheus.ca, "", ""}).ok());
  absl::StatusOr<HttpAnswer> plain =
      HttpGet(absl::StrCat("http://127.0.0.1:", *port), "/metrics");
  EXPECT_TRUE(!plain.ok() || plain->status != 200);
  EXPECT_TRUE((*locks)->Terminate().ok());
}

// Metrics found in `text`: the sample line `line` (with its value).
bool HasLine(const std::string& text, const std::string& line) {
  return absl::StrContains(text, line + "\n");
}

TEST_F(ObservabilityTest, OnEtcdTheLeaderAndTheStandbySayWhichTheyAre) {
  auto etcd = testing::EtcdCluster::Start(dir_.path());
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::unique_ptr<ServerProcess> instances[2];
  for (int i = 0; i < 2; ++i) {
    auto process = ServerProcess::Start(
        FENCEGATE_LOCKSERVICE_BIN,
        {"--store=" + (*etcd)->url(), "--etcd_session_ttl=2s", "--shutdown_grace=2s"},
        dir_.path(), absl::StrCat("lockservice-", i));
    ASSERT_TRUE(process.ok()) << process.status();
    instances[i] = *std::move(process);
  }
  int leader = -1;
  ASSERT_TRUE(
      testing::PollUntil(
          [&] {
            for (int i = 0; i < 2; ++i) {
              if (HasLine(Metrics(*instances[i]), "fencegate_lock_leader 1") &&
                  HasLine(Metrics(*instances[1 - i]), "fencegate_lock_leader 0")) {
                leader = i;
                return true;
              }
            }
            return false;
          },
          absl::Seconds(60), "one leader and one standby")
          .ok());
  ServerProcess& standby = *instances[1 - leader];
  const std::string leading = Metrics(*instances[leader]);
  EXPECT_TRUE(PromtoolCheckMetrics(leading).ok()) << PromtoolCheckMetrics(leading);
  EXPECT_TRUE(HasLine(leading, "fencegate_lock_terms_started_total 1"));
  EXPECT_TRUE(HasLine(leading, "fencegate_lock_leases_held 0"));
  EXPECT_FALSE(HasLine(leading, "fencegate_lock_leader_term 0"));
  const std::string standing_by = Metrics(standby);
  EXPECT_TRUE(PromtoolCheckMetrics(standing_by).ok())
      << PromtoolCheckMetrics(standing_by);
  EXPECT_TRUE(HasLine(standing_by, "fencegate_lock_leader_term 0"));
  // A standby serves no lock state: the gauges have no sample.
  EXPECT_THAT(standing_by, ::testing::Not(HasSubstr("\nfencegate_lock_leases_held ")));
  EXPECT_THAT(standing_by, HasSubstr("# TYPE fencegate_lock_leases_held gauge\n"));
  absl::StatusOr<HttpAnswer> page = HttpGet(Url(standby), "/");
  ASSERT_TRUE(page.ok());
  EXPECT_THAT(page->body, HasSubstr("standby (etcd)"));
  EXPECT_THAT(page->body, HasSubstr("id=\"figure-role\">standby"));

  // The leader hands over: the standby leads, and counts the change.
  ASSERT_TRUE(instances[leader]->Terminate().ok());
  ASSERT_TRUE(testing::PollUntil(
                  [&] { return HasLine(Metrics(standby), "fencegate_lock_leader 1"); },
                  absl::Seconds(60), "the standby taking over")
                  .ok());
  const std::string took_over = Metrics(standby);
  EXPECT_TRUE(HasLine(took_over, "fencegate_lock_terms_started_total 1"));
  EXPECT_THAT(took_over,
              ::testing::Not(HasSubstr("fencegate_lock_leader_changes_total 0\n")));
  EXPECT_TRUE(standby.Terminate().ok());
}

TEST_F(ObservabilityTest, OnPostgresTheReadConnectionsShowAndPromtoolAccepts) {
  absl::StatusOr<testing::PostgresServer*> postgres = testing::PostgresServer::Shared();
  ASSERT_TRUE(postgres.ok()) << postgres.status();
  absl::StatusOr<std::string> uri = (*postgres)->NewSchemaUri();
  ASSERT_TRUE(uri.ok()) << uri.status();
  auto gateway = ServerProcess::Start(FENCEGATE_GATEWAY_BIN,
                                      {"--storage=" + *uri, "--read_connections=3"},
                                      dir_.path(), "gateway");
  ASSERT_TRUE(gateway.ok()) << gateway.status();
  {
    auto client = client::GatewayClient::Connect((*gateway)->address());
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Put({"jobs/1", 5, {}}, "k", "v").ok());
    EXPECT_EQ((*client)->Put({"jobs/1", 3, {}}, "k", "late").status().code(),
              absl::StatusCode::kAborted);
    ASSERT_TRUE((*client)->ReadUnfenced("jobs/1", "k").ok());
  }
  const std::string text = Metrics(**gateway);
  EXPECT_TRUE(PromtoolCheckMetrics(text).ok()) << PromtoolCheckMetrics(text) << "\n"
                                               << text;
  EXPECT_TRUE(
      HasLine(text, "fencegate_gateway_postgres_read_connections{state=\"idle\"} 3"));
  EXPECT_TRUE(
      HasLine(text, "fencegate_gateway_postgres_read_connections{state=\"busy\"} 0"));
  EXPECT_TRUE(HasLine(text, "fencegate_gateway_postgres_read_waiters 0"));
  EXPECT_TRUE(HasLine(
      text, "fencegate_gateway_stale_refused_total{rpc=\"write\",class=\"jobs\"} 1"));
  // PostgreSQL's stored function does not say whether a fence rose.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("fencegate_gateway_fence_raises_total")));
  EXPECT_TRUE((*gateway)->Terminate().ok());
}

TEST_F(ObservabilityTest, EmptyMetricsListenTurnsMetricsOff) {
  auto locks = ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                    {"--metrics_listen=", "--db=" + dir_.File("l.db")},
                                    dir_.path(), "lockservice");
  ASSERT_TRUE(locks.ok()) << locks.status();
  EXPECT_EQ((*locks)->MetricsPort(absl::Seconds(1)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT((*locks)->LogTail(), HasSubstr("metrics=off"));
  {
    auto stub = fencegate::v1::ServerInfo::NewStub(
        grpc::CreateChannel((*locks)->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    fencegate::v1::GetMetricsResponse response;
    grpc::Status status =
        stub->GetMetrics(&context, fencegate::v1::GetMetricsRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(status.error_message(), HasSubstr("--metrics_listen"));
  }  // the channel closes: the server does not wait for it when stopping
  EXPECT_TRUE((*locks)->Terminate().ok());
}

}  // namespace
}  // namespace fencegate
