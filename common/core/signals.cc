#include "common/core/signals.h"

#include <pthread.h>
#include <signal.h>

namespace fencegate {
namespace {

sigset_t HandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockShutdownSignals() {
  sigset_t set = HandledSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal(const std::function<void()>& on_reload) {
  sigset_t set = HandledSignals();
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (signal != SIGHUP) return signal;
    if (on_reload) on_reload();
  }
}

}  // namespace fencegate
