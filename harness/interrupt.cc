#include "harness/interrupt.h"

#include <signal.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"

namespace fencegate::demo {
namespace {

std::atomic<int> interrupt_signal{0};

}  // namespace

void WatchForInterrupts() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) == 0) {
        int expected = 0;
        interrupt_signal.compare_exchange_strong(expected, signal);
      }
    }
  }).detach();  // lives as long as the process
}

int InterruptSignal() { return interrupt_signal.load(); }

absl::Status CheckInterrupted() {
  const int signal = InterruptSignal();
  if (signal == 0) return absl::OkStatus();
  return absl::CancelledError(
      absl::StrCat("interrupted by ", signal == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM"));
}

}  // namespace fencegate::demo
