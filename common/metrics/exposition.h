// The Prometheus text exposition format, version 0.0.4
// (prometheus.io/docs/instrumenting/exposition_formats): the pieces the
// Registry renders with, and a check of names.
//
//   # HELP <name> <help, with \ and newline escaped as \\ and \n>
//   # TYPE <name> counter|gauge|histogram
//   <name>{<label>="<value, with \, " and newline escaped>",...} <value>
//
// One HELP and one TYPE line per family, before its samples; a
// histogram's samples are <name>_bucket{...,le="<bound>"} (cumulative, the
// last le="+Inf"), <name>_sum and <name>_count. Values are decimal
// integers or the shortest decimal that reads back as the same double, or
// +Inf, -Inf, NaN. Every line ends with \n.
//
// Thread safety: functions are pure; an ExpositionWriter is used by one
// thread.
#ifndef FENCEGATE_COMMON_METRICS_EXPOSITION_H_
#define FENCEGATE_COMMON_METRICS_EXPOSITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fencegate::metrics {

// The HTTP Content-Type of the format.
inline constexpr char kExpositionContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };
absl::string_view TypeName(MetricType type);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(absl::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved).
bool IsValidLabelName(absl::string_view name);

std::string EscapeHelp(absl::string_view help);
std::string EscapeLabelValue(absl::string_view value);
std::string FormatValue(double value);
std::string FormatValue(uint64_t value);
std::string FormatValue(int64_t value);

// Appends families and samples to `out`.
class ExpositionWriter {
 public:
  explicit ExpositionWriter(std::string* out) : out_(out) {}

  // The HELP and TYPE lines of a family.
  void Family(absl::string_view name, absl::string_view help, MetricType type);
  // One sample line: `name` (with its _bucket/_sum/_count suffix for
  // histograms), `labels[i]`="`values[i]`", then `extra_name`="`extra_value`"
  // if `extra_name` is not empty (the le label of a bucket).
  // REQUIRES: labels.size() == values.size().
  void Sample(absl::string_view name, const std::vector<std::string>& labels,
              const std::vector<std::string>& values, absl::string_view value,
              absl::string_view extra_name = "", absl::string_view extra_value = "");

 private:
  std::string* const out_;
};

}  // namespace fencegate::metrics

#endif  // FENCEGATE_COMMON_METRICS_EXPOSITION_H_
