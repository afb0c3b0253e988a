// A real Prometheus (Debian's /usr/bin/prometheus, data in the test's temp
// dir, a 1 s scrape interval, loopback only) scrapes both real servers and
// evaluates docs/alerts.yml while the paused-holder scenario runs
// (fencing_scenarios_test.cc): client 1 is frozen until its lease
// expires, client 2 takes the lock and writes, client 1 thaws and tries
// its late writes, refused. Prometheus' HTTP query API must then count
// exactly the stale writes the client saw, the lock service's expiry, and
// fire FencegateStaleWritesRefused; `fencegate status --json` must say the
// same. Every wait polls a condition under a deadline.
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "harness/free_port.h"
#include "tests/testing/http_get.h"
#include "harness/poll.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using demo::Message;
using ::testing::HasSubstr;

class PrometheusTest : public E2eTest {
 protected:
  // Starts Prometheus scraping both servers, with the alert rules loaded.
  void StartPrometheus() {
    absl::StatusOr<std::string> lock_url = lockservice_->MetricsUrl();
    absl::StatusOr<std::string> gateway_url = gateway_->MetricsUrl();
    ASSERT_TRUE(lock_url.ok() && gateway_url.ok());
    auto target = [](const std::string& url) { return url.substr(url.find("//") + 2); };
    const std::string config = dir_.File("prometheus.yml");
    std::ofstream(config) << "global:\n"
                          << "  scrape_interval: 1s\n"
                          << "  scrape_timeout: 1s\n"
                          << "  evaluation_interval: 1s\n"
                          << "rule_files: ['" << FENCEGATE_ALERTS_YML << "']\n"
                          << "scrape_configs:\n"
                          << "  - job_name: fencegate-lockservice\n"
                          << "    static_configs: [{targets: ['" << target(*lock_url)
                          << "']}]\n"
                          << "  - job_name: fencegate-gateway\n"
                          << "    static_configs: [{targets: ['" << target(*gateway_url)
                          << "']}]\n";
    absl::StatusOr<int> port = testing::PickFreePort();
    ASSERT_TRUE(port.ok());
    prometheus_url_ = absl::StrCat("http://127.0.0.1:", *port);
    testing::ServerProcessOptions options;
    options.process.argv = {"/usr/bin/prometheus",
                            "--config.file=" + config,
                            "--storage.tsdb.path=" + dir_.File("prometheus-data"),
                            absl::StrCat("--web.listen-address=127.0.0.1:", *port),
                            "--storage.tsdb.retention.time=1h",
                            "--log.level=warn"};
    options.dir = dir_.path();
    options.name = "prometheus";
    options.port = *port;
    const std::string url = prometheus_url_;
    options.readiness =
        testing::Probe{[url](const testing::ServerProcess&) -> absl::Status {
          absl::StatusOr<testing::HttpAnswer> ready =
              testing::HttpGet(url, "/-/ready", {}, absl::Seconds(2));
          if (!ready.ok()) return ready.status();
          return ready->status == 200 ? absl::OkStatus()
                                      : absl::UnavailableError(ready->body);
        }};
    options.start_timeout = absl::Seconds(60);
    auto prometheus = testing::ServerProcess::Start(std::move(options));
    ASSERT_TRUE(prometheus.ok()) << prometheus.status();
    prometheus_ = *std::move(prometheus);
  }

  // The value of an instant query that returns one sample; nullopt while it
  // returns none.
  absl::StatusOr<std::optional<double>> Query(const std::string& promql) {
    absl::StatusOr<testing::HttpAnswer> answer = testing::HttpGet(
        prometheus_url_, "/api/v1/query?query=" + testing::UrlEscape(promql));
    if (!answer.ok()) return answer.status();
    google::protobuf::Struct json;
    if (answer->status != 200 ||
        !google::protobuf::util::JsonStringToMessage(answer->body, &json).ok()) {
      return absl::InternalError(absl::StrCat("query ", promql, ": ", answer->body));
    }
    const auto& result =
        json.fields().at("data").struct_value().fields().at("result").list_value();
    if (result.values_size() == 0) return std::optional<double>();
    if (result.values_size() > 1) {
      return absl::InternalError(
          absl::StrCat("query ", promql, " gave ", result.values_size(), " samples"));
    }
    const auto& value = result.values(0).struct_value().fields().at("value").list_value();
    double v = 0;
    if (!absl::SimpleAtod(value.values(1).string_value(), &v)) {
      return absl::InternalError(absl::StrCat("query ", promql, ": ", answer->body));
    }
    return std::optional<double>(v);
  }

  // Polls `promql` until it equals `expected`.
  absl::Status AwaitValue(const std::string& promql, double expected) {
    std::string last = "no answer";
    absl::Status polled = testing::PollUntil(
        [&] {
          absl::StatusOr<std::optional<double>> v = Query(promql);
          if (!v.ok()) {
            last = v.status().ToString();
            return false;
          }
          last = v->has_value() ? absl::StrCat(**v) : "no sample";
          return v->has_value() && **v == expected;
        },
        absl::Seconds(60), promql, absl::Milliseconds(250));
    if (!polled.ok()) {
      return absl::DeadlineExceededError(
          absl::StrCat(promql, " did not reach ", expected, " (last: ", last,
                       "); prometheus log:\n", prometheus_->LogTail()));
    }
    return absl::OkStatus();
  }

  std::string prometheus_url_;
  std::unique_ptr<testing::ServerProcess> prometheus_;
};

TEST_F(PrometheusTest, CountsTheStaleWritesTheClientSaw) {
  StartPrometheus();
  ASSERT_THAT(AwaitValue("sum(up{job=~\"fencegate-.*\"})", 2), testing::IsOk());

  ASSERT_OK_AND_ASSIGN(PausedHolder paused,
                       PauseHolderUntilSuperseded("orders/paused-holder"));
  // Its late writes; the client reports each refusal as "stale" (a client
  // that has learnt its lease is lost may stop writing: those are not sent).
  int stale_seen = 0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(Message late, Call(*paused.client1, "write"));
    if (late.status() == "stale") ++stale_seen;
  }
  ASSERT_GE(stale_seen, 1);

  EXPECT_THAT(
      AwaitValue("sum(fencegate_gateway_stale_refused_total{rpc=\"write\"})", stale_seen),
      testing::IsOk());
  EXPECT_THAT(AwaitValue("sum(fencegate_gateway_stale_refused_total{rpc=\"write\","
                         "class=\"orders\"})",
                         stale_seen),
              testing::IsOk());
  // Client 1's lease ended by its TTL, while it was frozen.
  EXPECT_THAT(AwaitValue("sum(fencegate_lock_expirations_total) >= bool 1", 1),
              testing::IsOk());
  // The alert an operator would get.
  EXPECT_THAT(AwaitValue("count(ALERTS{alertname=\"FencegateStaleWritesRefused\","
                         "alertstate=\"firing\"})",
                         1),
              testing::IsOk());

  // The CLI reads the same figure from the gateway itself.
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult status,
                       Cli({"status", "--server=" + gateway_address(), "--json"},
                           /*connect=*/false));
  EXPECT_EQ(status.exit_code, 0) << status.stderr_text;
  EXPECT_EQ(JsonUint(status.stdout_text, "stale_writes_refused"),
            static_cast<uint64_t>(stale_seen))
      << status.stdout_text;
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult text,
                       Cli({"status", "--server=" + lockservice_address()},
                           /*connect=*/false));
  EXPECT_EQ(text.exit_code, 0) << text.stderr_text;
  EXPECT_THAT(text.stdout_text, HasSubstr("Leases expired under their holder: "));
  EXPECT_TRUE(prometheus_->Terminate().ok()) << prometheus_->LogTail();
}

}  // namespace
}  // namespace fencegate::e2e
