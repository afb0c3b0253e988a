#include "common/test_hooks/test_hooks.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/base/log.h"

namespace fencegate::test_hooks {

// --planted_bug's type: only known names parse, so a typo fails at start-up
// with a message naming the flag instead of silently planting nothing.
struct PlantedBugFlag {
  std::string name;
};

bool AbslParseFlag(absl::string_view text, PlantedBugFlag* flag, std::string* error) {
  for (absl::string_view known : PlantedBugNames()) {
    if (text == known) {
      flag->name = std::string(text);
      return true;
    }
  }
  if (text.empty()) {
    flag->name.clear();
    return true;
  }
  *error = absl::StrCat("unknown planted bug '", text, "'; one of: ",
                        absl::StrJoin(PlantedBugNames(), ", "));
  return false;
}

std::string AbslUnparseFlag(const PlantedBugFlag& flag) { return flag.name; }

}  // namespace fencegate::test_hooks

ABSL_FLAG(std::string, failpoint_file, "",
          "TEST BUILD ONLY: a file saying 'crash NAME' or 'stall NAME' arms "
          "failpoint NAME (see common/test_hooks/test_hooks.h)");
ABSL_FLAG(fencegate::test_hooks::PlantedBugFlag, planted_bug, {},
          "TEST BUILD ONLY: switch on one deliberate bug, for the torture "
          "suite's checker to catch (docs/torture.md)");
ABSL_FLAG(std::string, lease_history_file, "",
          "TEST BUILD ONLY: append the lock service's lease events here");

namespace fencegate::test_hooks {
namespace {

// The flags never change after start-up; read them once.
struct Settings {
  std::string failpoint_file;
  std::string planted_bug;
  std::string lease_history_file;
  int history_fd = -1;
};

const Settings& GetSettings() {
  static absl::once_flag once;
  static Settings* settings = nullptr;
  absl::call_once(once, [] {
    settings = new Settings();
    settings->failpoint_file = absl::GetFlag(FLAGS_failpoint_file);
    settings->planted_bug = absl::GetFlag(FLAGS_planted_bug).name;
    settings->lease_history_file = absl::GetFlag(FLAGS_lease_history_file);
    if (!settings->lease_history_file.empty()) {
      settings->history_fd =
          open(settings->lease_history_file.c_str(),
               O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (settings->history_fd < 0) {
        LogError("TEST BUILD: cannot open --lease_history_file=%s",
                 settings->lease_history_file);
      }
    }
    LogWarning("TEST BUILD with test hooks: failpoint_file=%s planted_bug=%s "
               "lease_history_file=%s",
               settings->failpoint_file, settings->planted_bug,
               settings->lease_history_file);
  });
  return *settings;
}

// The whole (small) file, or "" if it cannot be read.
std::string ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[256];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

void WriteSmallFile(const std::string& path, absl::string_view text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, text.data(), text.size());
  close(fd);
}

}  // namespace

const std::vector<absl::string_view>& PlantedBugNames() {
  static const auto* names = new std::vector<absl::string_view>{
      "gateway_accepts_max_minus_one",
      "gateway_fence_only_in_memory",
      "gateway_fence_check_separate_transaction",
      "gateway_fenced_read_no_raise",
      "gateway_shared_read_unfenced",
      "gateway_fence_cache_trusted",
      "lock_token_replied_before_commit",
      "lock_leases_forgotten_on_restart",
      // Kinds of lease (lockservice/core/grant_rule.h, the seams of
      // lockservice/core/lock_manager_seams.cc):
      "lock_shared_beside_exclusive",
      "lock_permit_past_n",
      "lock_multi_partial_grant",
      // Elections (LeaseOfToken, the same seams):
      "lock_proclaim_after_term",
      // The lock service on etcd (lockservice/etcd/):
      "lock_leader_grants_without_session",
      "lock_standby_answers_locally",
      "lock_term_guard_off",
      // Grant-time fencing (gateway/fence_follower.cc):
      "gateway_follower_skips_catch_up",
      // Both servers' SQLite files (tests/torture/planted_disk_bug.cc):
      "disk_fsync_retry",
  };
  return *names;
}

void Failpoint(absl::string_view name) {
  FailpointOn(name, [](absl::string_view) { return true; });
}

void FailpointOn(absl::string_view name,
                 absl::FunctionRef<bool(absl::string_view)> has_subject) {
  const Settings& settings = GetSettings();
  if (settings.failpoint_file.empty()) return;
  const std::string armed(
      absl::StripAsciiWhitespace(ReadSmallFile(settings.failpoint_file)));
  // "ACTION NAME [SUBJECT]"
  const std::vector<absl::string_view> words =
      absl::StrSplit(armed, ' ', absl::SkipEmpty());
  if (words.size() < 2 || words.size() > 3 || words[1] != name) return;
  if (words.size() == 3 && !has_subject(words[2])) return;
  if (words[0] == "crash") {
    LogError("TEST BUILD: failpoint %s: crashing", name);
    WriteSmallFile(settings.failpoint_file + ".hit", name);
    absl::SleepFor(kFailpointCrashDelay);
    _exit(kFailpointExitCode);
  }
  if (words[0] != "stall") return;
  LogWarning("TEST BUILD: failpoint %s: stalled", name);
  WriteSmallFile(settings.failpoint_file + ".hit", name);
  while (absl::StripAsciiWhitespace(ReadSmallFile(settings.failpoint_file)) == armed) {
    absl::SleepFor(absl::Milliseconds(5));  // a stalled disk; the harness ends it
  }
  LogWarning("TEST BUILD: failpoint %s: going on", name);
}

bool FailpointHeld(absl::string_view name) {
  const Settings& settings = GetSettings();
  if (settings.failpoint_file.empty()) return false;
  const std::string armed(
      absl::StripAsciiWhitespace(ReadSmallFile(settings.failpoint_file)));
  const std::vector<absl::string_view> words =
      absl::StrSplit(armed, ' ', absl::SkipEmpty());
  const bool held = words.size() == 2 && words[0] == "hold" && words[1] == name;
  // Logged and reported once per hold, not at every question.
  static std::atomic<bool> holding{false};
  if (held && !holding.exchange(true)) {
    LogWarning("TEST BUILD: failpoint %s: held", name);
    WriteSmallFile(settings.failpoint_file + ".hit", name);
  } else if (!held && holding.exchange(false)) {
    LogWarning("TEST BUILD: failpoint %s: let go", name);
  }
  return held;
}

bool PlantedBug(absl::string_view bug) { return GetSettings().planted_bug == bug; }

void LeaseEvent(absl::string_view kind, absl::string_view resource, uint64_t token,
                absl::Duration ttl, absl::string_view holder) {
  const Settings& settings = GetSettings();
  if (settings.history_fd < 0) return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
  std::string line = absl::StrFormat("%d\t%s\t%s\t%d\t%d\t%s\n", ns, kind, resource,
                                     token, absl::ToInt64Milliseconds(ttl), holder);
  (void)!write(settings.history_fd, line.data(), line.size());
}

}  // namespace fencegate::test_hooks
