// Minimal logging to stderr (Abseil 20220623 has no absl/log).
//
//   LogInfo("listening on %s", address);
//
// Each call writes one line: "<UTC time> <I|W|E> <message>". Lines from
// concurrent callers do not interleave. Thread-safe.
#ifndef FENCEGATE_COMMON_LOG_H_
#define FENCEGATE_COMMON_LOG_H_

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

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

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_LOG_H_
