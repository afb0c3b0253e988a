#include "common/base/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/time/clock.h"

namespace fencegate {

LogFormat DetectLogFormat(const char* journal_stream, int fd) {
  if (journal_stream == nullptr) return LogFormat::kPlain;
  struct stat st;
  if (fstat(fd, &st) != 0) return LogFormat::kPlain;
  // As systemd writes it (systemd.exec(5), "JOURNAL_STREAM").
  const std::string expected =
      absl::StrFormat("%u:%u", static_cast<unsigned long long>(st.st_dev),
                      static_cast<unsigned long long>(st.st_ino));
  return expected == journal_stream ? LogFormat::kJournal : LogFormat::kPlain;
}

LogFormat StderrLogFormat() {
  static const LogFormat format =
      DetectLogFormat(std::getenv("JOURNAL_STREAM"), STDERR_FILENO);
  return format;
}

std::string FormatLogLine(LogFormat format, LogLevel level, absl::string_view message,
                          absl::Time now) {
  if (format == LogFormat::kJournal) {
    // syslog priorities: 6 info, 4 warning, 3 error.
    const char priority = level == LogLevel::kInfo      ? '6'
                          : level == LogLevel::kWarning ? '4'
                                                        : '3';
    return absl::StrFormat("<%c>%s\n", priority, message);
  }
  const char tag = level == LogLevel::kInfo      ? 'I'
                   : level == LogLevel::kWarning ? 'W'
                                                 : 'E';
  // Wall-clock time is for people reading the log only; no logic uses it.
  return absl::StrFormat(
      "%s %c %s\n", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone()),
      tag, message);
}

void LogLine(LogLevel level, absl::string_view message) {
  std::string line = FormatLogLine(StderrLogFormat(), level, message, absl::Now());
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write: no interleaving
  std::fflush(stderr);
}

}  // namespace fencegate
