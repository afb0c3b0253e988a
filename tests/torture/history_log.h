// The torture run's history files: how workers write them and how the
// checker's History (history.h) is read back from a run directory.
//
// A worker's file (worker-<name>.history) has one line per event, fields
// separated by tabs:
//
//   <ns> <process> <op> invoke <kind> key=value...   before the call is sent
//   <ns> <process> <op> <outcome> <kind> key=value...  when it returned
//   <ns> <process> 0 note <what> key=value...          anything else worth
//                                                      reading (not checked)
//   <ns> <process> 0 seen <election> key=value...      a change an observer
//                                                      was told (ObservedChange)
//
// <ns> is CLOCK_MONOTONIC (monotonic_clock.h), <op> a number unique in the
// file, <outcome> ok | refused | unknown, <kind> acquire | read | write |
// proclaim | release (a Campaign is an acquire with campaign=<its value>). An op with an
// invoke and no outcome line was cut off (its process was killed): its outcome is unknown
// and it never completed. Each line is one write(2) on an O_APPEND file, so a killed
// process loses no line it wrote, and a cut-off last line (no newline) is ignored.
//
// The lock service's lease history (lockservice.history, or one
// lockservice-<i>.history per instance of a replicated lock service) is the
// format of common/test_hooks/test_hooks.h; each event is tagged with the
// instance whose file it came from, and the files are merged in time order. The
// final state (final.tsv) is written by the harness:
//            final <resource> read_ns=.. fence=.. counter=..
//            log <resource> <log id> <value>
//            fencing grant-time      (the gateways followed the fence feed)
//            feed <resource> read_ns=.. fence=.. position=..
//                                    (its fence once they had caught up)
//
// Thread safety: HistoryWriter is thread-safe; the rest are pure functions.
#ifndef FENCEGATE_TESTS_TORTURE_HISTORY_LOG_H_
#define FENCEGATE_TESTS_TORTURE_HISTORY_LOG_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/torture/history.h"

namespace fencegate::torture {

using Fields = std::vector<std::pair<std::string, std::string>>;

class HistoryWriter {
 public:
  // Appends to `path` (created if missing); `process` names every line.
  static absl::StatusOr<std::unique_ptr<HistoryWriter>> Open(const std::string& path,
                                                             std::string process);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Records that an op of `kind` is about to be sent; returns its id.
  uint64_t Invoke(absl::string_view kind, const Fields& fields);
  // Records the outcome of op `op`, now.
  void Complete(uint64_t op, absl::string_view kind, Outcome outcome, const Fields& fields);
  void Note(absl::string_view what, const Fields& fields);
  // Records that this process's observer of `election` was told `fields`
  // (leader, term, seq, value, candidate).
  void Seen(absl::string_view election, const Fields& fields);

 private:
  HistoryWriter(int fd, std::string process) : fd_(fd), process_(std::move(process)) {}
  void Write(uint64_t op, absl::string_view phase, absl::string_view kind,
             const Fields& fields);

  const int fd_;
  const std::string process_;
  std::atomic<uint64_t> next_op_{1};
};

// Adds the ops in one worker's file to `history`. INVALID_ARGUMENT naming
// the line for anything malformed.
absl::Status ParseWorkerHistory(absl::string_view text, History* history);
// Adds the lease events of lock-service instance `instance` to `history`
// (in file order; LoadRunDirectory merges several instances by time).
absl::Status ParseLeaseHistory(absl::string_view text, History* history,
                               const std::string& instance = "lockservice");

std::string FormatFinalState(const std::map<std::string, FinalState>& final_state,
                             bool grant_time_fencing = false,
                             const std::map<std::string, FeedFence>& feed_fences = {});
absl::Status ParseFinalState(absl::string_view text, History* history);

// Every worker-*.history, lockservice*.history and final.tsv in `dir`.
absl::StatusOr<History> LoadRunDirectory(const std::string& dir);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_HISTORY_LOG_H_
