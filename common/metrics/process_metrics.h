// The standard process metrics every Prometheus client library exports,
// read from /proc/self at each scrape (Linux only), with the names
// Prometheus' own process collector uses:
//
//   process_cpu_seconds_total       user + system CPU time
//   process_resident_memory_bytes   resident set size
//   process_virtual_memory_bytes    virtual memory size
//   process_open_fds                open file descriptors
//   process_max_fds                 the soft limit on them (RLIMIT_NOFILE)
//   process_start_time_seconds      start time, seconds since the Unix epoch
//
// A value that cannot be read is left out of that scrape (the family
// renders with no sample), never reported as 0.
//
// Thread safety: ReadProcessStats() is thread-safe.
#ifndef FENCEGATE_COMMON_METRICS_PROCESS_METRICS_H_
#define FENCEGATE_COMMON_METRICS_PROCESS_METRICS_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "common/metrics/registry.h"

namespace fencegate::metrics {

struct ProcessStats {
  std::optional<double> cpu_seconds;
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
  std::optional<double> start_time_seconds;
};

// `proc` is the process's /proc directory (tests may point elsewhere).
ProcessStats ReadProcessStats(absl::string_view proc = "/proc/self");

// Adds the families above to `registry`.
void AddProcessMetrics(Registry& registry);

}  // namespace fencegate::metrics

#endif  // FENCEGATE_COMMON_METRICS_PROCESS_METRICS_H_
