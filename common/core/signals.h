// Clean shutdown on SIGTERM/SIGINT, and reload on SIGHUP, for the servers'
// mains.
//
// Call BlockShutdownSignals() first thing in main(), before any thread
// starts, so every thread inherits the blocked mask; then
// WaitForShutdownSignal() in the main thread returns the signal once
// SIGTERM or SIGINT arrives, and main() shuts the server down in order.
// Each SIGHUP before that runs `on_reload` (if given) on the main thread
// (the servers reload their signing keys).
#ifndef FENCEGATE_COMMON_CORE_SIGNALS_H_
#define FENCEGATE_COMMON_CORE_SIGNALS_H_

#include <functional>

namespace fencegate {

void BlockShutdownSignals();
int WaitForShutdownSignal(const std::function<void()>& on_reload = nullptr);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_SIGNALS_H_
