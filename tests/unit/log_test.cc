// common/base/log.h: the line format on a terminal and in the journal.
#include "common/base/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace fencegate {
namespace {

const absl::Time kNoon = absl::FromUnixSeconds(1795780800) + absl::Milliseconds(5);

TEST(LogTest, PlainLinesCarryTheTimeAndTheLevel) {
  EXPECT_EQ(FormatLogLine(LogFormat::kPlain, LogLevel::kInfo, "serving", kNoon),
            "2026-11-27T12:00:00.005Z I serving\n");
  EXPECT_EQ(FormatLogLine(LogFormat::kPlain, LogLevel::kWarning, "slow", kNoon),
            "2026-11-27T12:00:00.005Z W slow\n");
  EXPECT_EQ(FormatLogLine(LogFormat::kPlain, LogLevel::kError, "failed", kNoon),
            "2026-11-27T12:00:00.005Z E failed\n");
}

// The journal stamps the time itself and reads the priority from a
// syslog prefix: info 6, warning 4, error 3.
TEST(LogTest, JournalLinesCarryThePriorityAndNoTime) {
  EXPECT_EQ(FormatLogLine(LogFormat::kJournal, LogLevel::kInfo, "serving", kNoon),
            "<6>serving\n");
  EXPECT_EQ(FormatLogLine(LogFormat::kJournal, LogLevel::kWarning, "slow", kNoon),
            "<4>slow\n");
  EXPECT_EQ(FormatLogLine(LogFormat::kJournal, LogLevel::kError, "failed", kNoon),
            "<3>failed\n");
}

// The journal is recognised by the device and inode systemd puts in
// JOURNAL_STREAM, not by the variable alone: a shell started by a service
// passes it on to programs whose stderr is a terminal or a file.
TEST(LogTest, JournalOnlyWhenJournalStreamNamesTheFile) {
  char path[] = "/tmp/fencegate-log-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const std::string same = absl::StrCat(st.st_dev, ":", st.st_ino);
  const std::string other = absl::StrCat(st.st_dev, ":", st.st_ino + 1);
  EXPECT_EQ(DetectLogFormat(same.c_str(), fd), LogFormat::kJournal);
  EXPECT_EQ(DetectLogFormat(other.c_str(), fd), LogFormat::kPlain);
  EXPECT_EQ(DetectLogFormat("", fd), LogFormat::kPlain);
  EXPECT_EQ(DetectLogFormat(nullptr, fd), LogFormat::kPlain);
  close(fd);
  unlink(path);
}

}  // namespace
}  // namespace fencegate
