// BlockedSignals: signals taken out of the normal delivery and read from a
// descriptor instead (signalfd), so that `fencegate run` (run_command.cc)
// handles them in its poll loop and no work runs in a signal handler.
//
// The constructor blocks the signals in the calling thread, which every
// thread started after it inherits. REQUIRES: construct it before any
// other thread of the process starts (the client library's gRPC threads),
// or a thread that does not block them gets them with their default action.
// The destructor closes the descriptor and leaves the signals blocked (a
// pending one stays pending; the process is about to exit).
//
// Thread safety: not thread-safe; one thread owns it.
#ifndef FENCEGATE_CLI_BLOCKED_SIGNALS_H_
#define FENCEGATE_CLI_BLOCKED_SIGNALS_H_

#include <signal.h>

#include <initializer_list>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace fencegate::cli {

class BlockedSignals {
 public:
  // INTERNAL if the signalfd cannot be made.
  static absl::StatusOr<std::unique_ptr<BlockedSignals>> Block(
      std::initializer_list<int> signals);
  ~BlockedSignals();
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

  // Readable (poll) while a signal is pending.
  int fd() const { return fd_; }
  // The signals pending now, in the order read; empty if none. Never blocks.
  std::vector<int> Take();

 private:
  explicit BlockedSignals(int fd) : fd_(fd) {}
  const int fd_;
};

// Ends the process by `signal`'s default action, as if it had not been
// blocked (a command that gives up after a blocked SIGINT dies of SIGINT,
// as the shell expects). Returns only if that action does not end it.
void DieOf(int signal);

}  // namespace fencegate::cli

#endif  // FENCEGATE_CLI_BLOCKED_SIGNALS_H_
