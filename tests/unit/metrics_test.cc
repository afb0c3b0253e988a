// The metrics module (common/metrics/): the exposition as the text format
// 0.0.4 says, histograms' cumulative buckets, label escaping, and the
// parser and key figures that read it back. promtool's view of whole
// servers' output is in tests/integration/observability_test.cc.
#include "common/metrics/metrics.h"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/metrics/exposition.h"
#include "common/metrics/key_figures.h"
#include "common/metrics/process_metrics.h"
#include "common/metrics/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fencegate::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExpositionTest, EscapesHelpAndLabelValuesAsTheFormatSays) {
  EXPECT_EQ(EscapeHelp("a\\b\nc\"d"), "a\\\\b\\nc\"d");  // quotes stay in HELP
  EXPECT_EQ(EscapeLabelValue("a\\b\nc\"d"), "a\\\\b\\nc\\\"d");
}

TEST(ExpositionTest, FormatsValuesShortestAndSpecialsByName) {
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(10.0), "10");
  EXPECT_EQ(FormatValue(0.00025), "0.00025");
  EXPECT_EQ(FormatValue(1e-7), "1e-07");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
  EXPECT_EQ(FormatValue(uint64_t{18446744073709551615u}), "18446744073709551615");
  for (double v : {0.1, 1.0 / 3, 123456.789, 6.02e23, 1e-300}) {
    EXPECT_EQ(std::stod(FormatValue(v)), v) << FormatValue(v);
  }
}

TEST(ExpositionTest, ChecksNames) {
  EXPECT_TRUE(IsValidMetricName("fencegate_lock_grants_total"));
  EXPECT_TRUE(IsValidMetricName("a:b"));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("kind"));
  EXPECT_FALSE(IsValidLabelName("__name__"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

TEST(RegistryTest, RendersHelpTypeAndSamplesOfEachFamilyInOrder) {
  Registry registry;
  auto& grants = registry.AddCounter("t_grants_total", "Grants.\nTwo lines.", {"kind"});
  grants.Get({"waited"}).Increment(3);
  grants.Get({"say \"hi\"\\"}).Increment();
  registry.AddGauge("t_held", "Held.").Get().Set(-2);
  EXPECT_EQ(registry.Render(),
            "# HELP t_grants_total Grants.\\nTwo lines.\n"
            "# TYPE t_grants_total counter\n"
            "t_grants_total{kind=\"waited\"} 3\n"
            "t_grants_total{kind=\"say \\\"hi\\\"\\\\\"} 1\n"
            "# HELP t_held Held.\n"
            "# TYPE t_held gauge\n"
            "t_held -2\n");
}

TEST(RegistryTest, GetReturnsTheSameChildForTheSameLabels) {
  Registry registry;
  auto& family = registry.AddCounter("t_total", "T.", {"a", "b"});
  Counter& one = family.Get({"x", "y"});
  EXPECT_EQ(&one, &family.Get({"x", "y"}));
  EXPECT_NE(&one, &family.Get({"y", "x"}));
}

TEST(RegistryTest, HistogramBucketsAreCumulativeWithSumCountAndInf) {
  Registry registry;
  Histogram& h = registry.AddHistogram("t_seconds", "T.", {0.25, 1}, {"op"}).Get({"w"});
  for (double v : {0.125, 0.25, 0.5, 2.0, 3.0}) h.Observe(v);  // 0.25 is in le="0.25"
  EXPECT_EQ(registry.Render(),
            "# HELP t_seconds T.\n"
            "# TYPE t_seconds histogram\n"
            "t_seconds_bucket{op=\"w\",le=\"0.25\"} 2\n"
            "t_seconds_bucket{op=\"w\",le=\"1\"} 3\n"
            "t_seconds_bucket{op=\"w\",le=\"+Inf\"} 5\n"
            "t_seconds_sum{op=\"w\"} 5.875\n"
            "t_seconds_count{op=\"w\"} 5\n");
}

TEST(RegistryTest, ConcurrentUpdatesAreAllCounted) {
  Registry registry;
  Counter& c = registry.AddCounter("t_total", "T.").Get();
  Histogram& h = registry.AddHistogram("t_seconds", "T.", {1}).Get();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        h.Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Value(), 40000u);
  Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_DOUBLE_EQ(s.sum, 20000);
}

TEST(RegistryTest, CollectedFamiliesAreReadAtEachRenderUntilRemoved) {
  Registry registry;
  int calls = 0;
  int owner = 0;
  registry.AddCollected(
      "t_now", "T.", MetricType::kGauge, {"state"},
      [&calls](std::vector<CollectedSample>& out) {
        ++calls;
        out.push_back({{"idle"}, static_cast<double>(calls)});
      },
      &owner);
  EXPECT_THAT(registry.Render(), HasSubstr("t_now{state=\"idle\"} 1\n"));
  EXPECT_THAT(registry.Render(), HasSubstr("t_now{state=\"idle\"} 2\n"));
  registry.RemoveCollected(&owner);
  const std::string after = registry.Render();
  EXPECT_THAT(after, HasSubstr("# TYPE t_now gauge\n"));
  EXPECT_THAT(after, Not(HasSubstr("t_now{")));
  EXPECT_EQ(calls, 2);
}

TEST(RegistryDeathTest, ProgrammingErrorsAbortAtRegistration) {
  Registry registry;
  registry.AddCounter("t_total", "T.");
  EXPECT_DEATH(registry.AddGauge("t_total", "again"), "added twice");
  EXPECT_DEATH(registry.AddCounter("bad-name", "x"), "bad metric name");
  EXPECT_DEATH(registry.AddHistogram("t_h", "x", {1, 1}), "increasing");
  EXPECT_DEATH(registry.AddHistogram("t_h2", "x", {1}, {"le"}), "bucket label");
  EXPECT_DEATH(registry.AddCounter("t2_total", "x", {"a"}).Get({}), "given 0 values");
}

TEST(ParseExpositionTest, ReadsBackWhatTheRegistryWrites) {
  Registry registry;
  registry.AddCounter("t_total", "T.", {"a", "b"}).Get({"x \"q\"", "\\n"}).Increment(7);
  registry.AddHistogram("t_seconds", "T.", {0.5}).Get().Observe(0.25);
  absl::StatusOr<std::vector<Sample>> samples = ParseExposition(registry.Render());
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 5u);
  EXPECT_EQ((*samples)[0].name, "t_total");
  EXPECT_EQ((*samples)[0].labels.at("a"), "x \"q\"");
  EXPECT_EQ((*samples)[0].labels.at("b"), "\\n");
  EXPECT_EQ((*samples)[0].value, 7);
  EXPECT_EQ(SumOf(*samples, "t_seconds_bucket", {{"le", "+Inf"}}), 1);
  EXPECT_EQ(SumOf(*samples, "t_seconds_sum"), 0.25);
  EXPECT_EQ(SumOf(*samples, "absent"), std::nullopt);
}

TEST(ParseExpositionTest, NamesTheLineThatDoesNotParse) {
  absl::StatusOr<std::vector<Sample>> samples = ParseExposition("a 1\nb{x=\"1\" 2\n");
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(std::string(samples.status().message()), HasSubstr("line 2"));
}

TEST(KeyFiguresTest, GatewayFiguresCountStaleWritesApartFromOtherRefusals) {
  const std::string text =
      "fencegate_build_info{program=\"fencegate-gateway\",version=\"0.1.0\",git_sha="
      "\"abc\"} 1\n"
      "fencegate_gateway_stale_refused_total{rpc=\"write\",class=\"orders\"} 2\n"
      "fencegate_gateway_stale_refused_total{rpc=\"write\",class=\"other\"} 1\n"
      "fencegate_gateway_stale_refused_total{rpc=\"fence\",class=\"orders\"} 4\n"
      "fencegate_gateway_requests_total{rpc=\"write\",result=\"ok\"} 10\n"
      "fencegate_gateway_requests_total{rpc=\"write\",result=\"stale_token\"} 3\n";
  absl::StatusOr<std::vector<Sample>> samples = ParseExposition(text);
  ASSERT_TRUE(samples.ok());
  std::vector<Figure> figures = KeyFigures(*samples, absl::Now());
  auto find = [&](const std::string& key) -> const Figure* {
    for (const Figure& f : figures) {
      if (f.key == key) return &f;
    }
    return nullptr;
  };
  ASSERT_NE(find("stale_writes_refused"), nullptr);
  EXPECT_EQ(find("stale_writes_refused")->number, 3);
  EXPECT_EQ(find("stale_refused")->number, 7);
  EXPECT_EQ(find("requests_refused")->number, 3);
  EXPECT_EQ(find("version")->text, "0.1.0 (git abc)");
  EXPECT_EQ(find("feed")->text, "off (no --lockservice)");
  EXPECT_EQ(find("leases_held"), nullptr);
  const std::string json = FiguresJson(figures);
  EXPECT_THAT(json, HasSubstr("\"stale_writes_refused\":3"));
  EXPECT_THAT(json, HasSubstr("\"version\":\"0.1.0 (git abc)\""));
}

TEST(ProcessMetricsTest, ReadsThisProcess) {
  ProcessStats stats = ReadProcessStats();
  ASSERT_TRUE(stats.cpu_seconds.has_value());
  ASSERT_TRUE(stats.resident_bytes.has_value());
  EXPECT_GT(*stats.resident_bytes, 1 << 20);
  ASSERT_TRUE(stats.open_fds.has_value());
  EXPECT_GE(*stats.open_fds, 3);  // stdin, stdout, stderr
  ASSERT_TRUE(stats.start_time_seconds.has_value());
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  EXPECT_LE(*stats.start_time_seconds, now + 1);
  EXPECT_GT(*stats.start_time_seconds, now - 3600);
}

}  // namespace
}  // namespace fencegate::metrics
