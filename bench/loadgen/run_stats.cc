#include "bench/loadgen/run_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace fencegate::bench {

double PercentileUs(const std::vector<int64_t>& sorted_ns, double p) {
  if (sorted_ns.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p * sorted_ns.size()));
  rank = std::clamp<size_t>(rank, 1, sorted_ns.size());
  return sorted_ns[rank - 1] / 1000.0;
}

RunSummary Summarize(std::vector<ClientTally>& tallies, absl::Duration measured) {
  RunSummary summary;
  std::vector<int64_t> latency;
  std::vector<int64_t> wait;
  double sum = 0;
  double sum_squares = 0;
  int64_t holder_changes = 0;
  int64_t writes = 0;
  bool first = true;
  for (ClientTally& tally : tallies) {
    const int64_t ops = static_cast<int64_t>(tally.latency_ns.size());
    summary.ops += ops;
    summary.errors += tally.errors;
    summary.not_acquired += tally.not_acquired;
    summary.abandoned += tally.abandoned;
    holder_changes += tally.holder_changes;
    writes += tally.writes;
    summary.client_ops_min = first ? ops : std::min(summary.client_ops_min, ops);
    summary.client_ops_max = first ? ops : std::max(summary.client_ops_max, ops);
    first = false;
    sum += ops;
    sum_squares += static_cast<double>(ops) * ops;
    latency.insert(latency.end(), tally.latency_ns.begin(), tally.latency_ns.end());
    wait.insert(wait.end(), tally.wait_ns.begin(), tally.wait_ns.end());
    tally.latency_ns = {};
    tally.wait_ns = {};
  }
  std::sort(latency.begin(), latency.end());
  std::sort(wait.begin(), wait.end());
  summary.ops_per_s = summary.ops / absl::ToDoubleSeconds(measured);
  summary.holder_changes_per_s = holder_changes / absl::ToDoubleSeconds(measured);
  summary.writes_per_s = writes / absl::ToDoubleSeconds(measured);
  summary.p50_us = PercentileUs(latency, 0.50);
  summary.p99_us = PercentileUs(latency, 0.99);
  summary.max_us = PercentileUs(latency, 1.0);
  summary.wait_p50_us = PercentileUs(wait, 0.50);
  summary.wait_p99_us = PercentileUs(wait, 0.99);
  summary.wait_max_us = PercentileUs(wait, 1.0);
  summary.jain_fairness =
      sum_squares > 0 ? sum * sum / (tallies.size() * sum_squares) : 0;
  return summary;
}

std::string ToJsonLine(const RunLabels& l, const RunSummary& s) {
  return absl::StrFormat(
      "{\"system\": \"%s\", \"durability\": \"%s\", \"workload\": \"%s\", "
      "\"resources\": %d, \"clients\": %d, \"duration_s\": %.3f, "
      "\"ops\": %d, \"errors\": %d, \"not_acquired\": %d, \"abandoned\": %d, "
      "\"ops_per_s\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f, "
      "\"holder_changes_per_s\": %.1f, \"wait_p50_us\": %.1f, \"wait_p99_us\": %.1f, "
      "\"wait_max_us\": %.1f, "
      "\"writes_per_s\": %.1f, "
      "\"client_ops_min\": %d, \"client_ops_max\": %d, \"jain_fairness\": %.4f, "
      "\"client_cpu_us_per_op\": %.1f, \"server_cpu_us_per_op\": %.1f, "
      "\"other_cpu_share\": %.3f, \"client_switches_per_op\": %.2f, "
      "\"server_switches_per_op\": %.2f}",
      l.system, l.durability, l.workload, l.resources, l.clients, l.duration_s, s.ops,
      s.errors, s.not_acquired, s.abandoned, s.ops_per_s, s.p50_us, s.p99_us, s.max_us,
      s.holder_changes_per_s, s.wait_p50_us, s.wait_p99_us, s.wait_max_us, s.writes_per_s,
      s.client_ops_min, s.client_ops_max, s.jain_fairness, s.client_cpu_us_per_op,
      s.server_cpu_us_per_op, s.other_cpu_share, s.client_switches_per_op,
      s.server_switches_per_op);
}

}  // namespace fencegate::bench
