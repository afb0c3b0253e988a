#include "cli/blocked_signals.h"

#include <errno.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace fencegate::cli {

absl::StatusOr<std::unique_ptr<BlockedSignals>> BlockedSignals::Block(
    std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) {
    return absl::InternalError("cannot block signals");
  }
  const int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return absl::InternalError(absl::StrCat("signalfd: ", strerror(errno)));
  return std::unique_ptr<BlockedSignals>(new BlockedSignals(fd));
}

BlockedSignals::~BlockedSignals() { close(fd_); }

std::vector<int> BlockedSignals::Take() {
  std::vector<int> taken;
  signalfd_siginfo info[8];
  for (;;) {
    const ssize_t n = read(fd_, info, sizeof(info));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(info[0]); ++i) {
      taken.push_back(static_cast<int>(info[i].ssi_signo));
    }
  }
  return taken;
}

void DieOf(int signal) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigaction(signal, &dfl, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signal);
  // Unblocked in this thread only: raise() delivers it here, at once.
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signal);
}

}  // namespace fencegate::cli
