#include "common/metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fencegate::metrics {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The system's boot time, seconds since the epoch ("btime" in /proc/stat).
std::optional<double> BootTime() {
  std::istringstream stat(ReadFile("/proc/stat"));
  std::string line;
  while (std::getline(stat, line)) {
    double btime = 0;
    if (line.rfind("btime ", 0) == 0 && absl::SimpleAtod(line.substr(6), &btime)) {
      return btime;
    }
  }
  return std::nullopt;
}

std::optional<double> CountFds(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  double n = 0;
  while (dirent* entry = readdir(d)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // the descriptor opendir() itself holds
}

}  // namespace

ProcessStats ReadProcessStats(absl::string_view proc) {
  ProcessStats stats;
  // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces,
  // so split after its closing parenthesis. Fields after it, from 1:
  // utime 12, stime 13, starttime 20, vsize 21, rss 22 (man 5 proc).
  const std::string stat = ReadFile(absl::StrCat(proc, "/stat"));
  const size_t close = stat.rfind(')');
  if (close != std::string::npos && close + 2 <= stat.size()) {
    std::vector<absl::string_view> f =
        absl::StrSplit(absl::string_view(stat).substr(close + 2), ' ', absl::SkipEmpty());
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    double utime, stime, start, vsize, rss;
    if (f.size() > 22 && absl::SimpleAtod(f[11], &utime) &&
        absl::SimpleAtod(f[12], &stime) && absl::SimpleAtod(f[19], &start) &&
        absl::SimpleAtod(f[20], &vsize) && absl::SimpleAtod(f[21], &rss) && ticks > 0) {
      stats.cpu_seconds = (utime + stime) / ticks;
      stats.virtual_bytes = vsize;
      stats.resident_bytes = rss * page;
      if (std::optional<double> boot = BootTime()) {
        stats.start_time_seconds = *boot + start / ticks;
      }
    }
  }
  stats.open_fds = CountFds(absl::StrCat(proc, "/fd"));
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    stats.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return stats;
}

void AddProcessMetrics(Registry& registry) {
  using Field = std::optional<double> ProcessStats::*;
  struct Metric {
    const char* name;
    const char* help;
    MetricType type;
    Field field;
  };
  static const Metric kMetrics[] = {
      {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
       MetricType::kCounter, &ProcessStats::cpu_seconds},
      {"process_resident_memory_bytes", "Resident memory size in bytes.",
       MetricType::kGauge, &ProcessStats::resident_bytes},
      {"process_virtual_memory_bytes", "Virtual memory size in bytes.",
       MetricType::kGauge, &ProcessStats::virtual_bytes},
      {"process_open_fds", "Number of open file descriptors.", MetricType::kGauge,
       &ProcessStats::open_fds},
      {"process_max_fds", "Maximum number of open file descriptors.", MetricType::kGauge,
       &ProcessStats::max_fds},
      {"process_start_time_seconds",
       "Start time of the process since unix epoch in seconds.", MetricType::kGauge,
       &ProcessStats::start_time_seconds},
  };
  for (const Metric& m : kMetrics) {
    const Field field = m.field;
    registry.AddCollected(m.name, m.help, m.type, {},
                          [field](std::vector<CollectedSample>& out) {
                            std::optional<double> value = ReadProcessStats().*field;
                            if (value) out.push_back({{}, *value});
                          });
  }
}

}  // namespace fencegate::metrics
