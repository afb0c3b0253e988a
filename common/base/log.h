// Minimal logging to stderr (Abseil 20220623 has no absl/log).
//
//   LogInfo("listening on %s", address);
//
// Each call writes one line. On a terminal or into a file:
// "<UTC time> <I|W|E> <message>". When stderr is the systemd journal (a
// service started by its unit: systemd sets JOURNAL_STREAM to the device
// and inode of the stream it gave the service, and they match stderr's),
// "<6>|<4>|<3><message>": the journal keeps the priority (info, warning,
// error; `journalctl -p warning`) and stamps the time itself. Lines from
// concurrent callers do not interleave. Thread-safe.
#ifndef FENCEGATE_COMMON_BASE_LOG_H_
#define FENCEGATE_COMMON_BASE_LOG_H_

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate {

enum class LogLevel { kInfo, kWarning, kError };

void LogLine(LogLevel level, absl::string_view message);

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kInfo, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kWarning, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kError, absl::StrFormat(format, args...));
}

// Where a line goes and so what it looks like (see above).
enum class LogFormat { kPlain, kJournal };
// kJournal iff `journal_stream` (JOURNAL_STREAM's value, or null) is
// "<device>:<inode>" of the open file `fd`.
LogFormat DetectLogFormat(const char* journal_stream, int fd);
// DetectLogFormat(JOURNAL_STREAM, stderr), found once per process.
LogFormat StderrLogFormat();
// The line LogLine() writes (with its newline), `now` on the wall clock.
std::string FormatLogLine(LogFormat format, LogLevel level, absl::string_view message,
                          absl::Time now);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_BASE_LOG_H_
