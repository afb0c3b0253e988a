#include "common/log.h"

#include <cstdio>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fencegate {

void LogLine(LogLevel level, absl::string_view message) {
  const char tag = level == LogLevel::kInfo      ? 'I'
                   : level == LogLevel::kWarning ? 'W'
                                                 : 'E';
  // Wall-clock time is for people reading the log only; no logic uses it.
  std::string line = absl::StrFormat(
      "%s %c %s\n",
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
      tag, message);
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write: no interleaving
  std::fflush(stderr);
}

}  // namespace fencegate
