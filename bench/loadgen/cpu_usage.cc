#include "bench/loadgen/cpu_usage.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fencegate::bench {
namespace {

absl::Duration Ticks(long long ticks) {
  static const long kTicksPerSecond = sysconf(_SC_CLK_TCK);
  return absl::Seconds(1) * ticks / kTicksPerSecond;
}

absl::Duration ProcessCpu(pid_t pid) {
  std::ifstream file(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(file, line)) return absl::ZeroDuration();
  // The command name may hold spaces; the fields after it are plain.
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return absl::ZeroDuration();
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  long long utime = 0, stime = 0;
  // Fields 3.. of the line; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return Ticks(utime + stime);
}

// The context switches of every thread of `pid` alive now.
int64_t ProcessSwitches(pid_t pid) {
  int64_t switches = 0;
  std::error_code error;
  for (const auto& task :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/task"), error)) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (absl::StartsWith(line, "voluntary_ctxt_switches:") ||
          absl::StartsWith(line, "nonvoluntary_ctxt_switches:")) {
        int64_t n = 0;
        if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)),
                             &n)) {
          switches += n;
        }
      }
    }
  }
  return switches;
}

}  // namespace

CpuSnapshot TakeCpuSnapshot(const std::vector<pid_t>& servers) {
  CpuSnapshot snapshot;
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    snapshot.self = absl::DurationFromTimeval(usage.ru_utime) +
                    absl::DurationFromTimeval(usage.ru_stime);
    snapshot.self_switches = usage.ru_nvcsw + usage.ru_nivcsw;
  }
  for (pid_t pid : servers) {
    snapshot.servers += ProcessCpu(pid);
    snapshot.server_switches += ProcessSwitches(pid);
  }
  std::ifstream stat("/proc/stat");
  std::string cpu;
  long long total = 0, idle = 0, value = 0;
  stat >> cpu;  // "cpu": the sum over all cores
  for (int i = 0; i < 8 && stat >> value; ++i) {
    total += value;
    if (i == 3 || i == 4) idle += value;  // idle, iowait
  }
  snapshot.machine_busy = Ticks(total - idle);
  snapshot.machine_total = Ticks(total);
  return snapshot;
}

CpuShares CpuBetween(const CpuSnapshot& before, const CpuSnapshot& after,
                     int64_t ops) {
  CpuShares shares;
  const absl::Duration self = after.self - before.self;
  const absl::Duration servers = after.servers - before.servers;
  if (ops > 0) {
    shares.self_us_per_op = absl::ToDoubleMicroseconds(self) / ops;
    shares.servers_us_per_op = absl::ToDoubleMicroseconds(servers) / ops;
    shares.self_switches_per_op =
        static_cast<double>(after.self_switches - before.self_switches) / ops;
    shares.server_switches_per_op =
        static_cast<double>(after.server_switches - before.server_switches) / ops;
  }
  const absl::Duration total = after.machine_total - before.machine_total;
  if (total > absl::ZeroDuration()) {
    const absl::Duration others =
        (after.machine_busy - before.machine_busy) - self - servers;
    shares.others = std::clamp(absl::FDivDuration(others, total), 0.0, 1.0);
  }
  return shares;
}

}  // namespace fencegate::bench
