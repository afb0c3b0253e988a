// Ctrl-C and SIGTERM for the demo: instead of dying on the spot (and
// leaving servers running and temp files behind), the demo notices the
// signal at its next wait and unwinds, and its destructors stop every
// process it started and remove its temp directory.
//
// WatchForInterrupts() blocks SIGINT and SIGTERM in the calling thread
// (call it first in main(), before any thread starts, so all inherit the
// mask) and starts a thread that records the first one that arrives.
// Every wait in the demo polls Interrupted() under its deadline.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_HARNESS_INTERRUPT_H_
#define FENCEGATE_HARNESS_INTERRUPT_H_

#include "absl/status/status.h"

namespace fencegate::demo {

void WatchForInterrupts();
// 0 until SIGINT or SIGTERM arrived; then that signal.
int InterruptSignal();
inline bool Interrupted() { return InterruptSignal() != 0; }
// CANCELLED "interrupted by SIGINT" when Interrupted(), else OK.
absl::Status CheckInterrupted();

}  // namespace fencegate::demo

#endif  // FENCEGATE_HARNESS_INTERRUPT_H_
