// Clean shutdown on SIGTERM/SIGINT for the servers' mains.
//
// Call BlockShutdownSignals() first thing in main(), before any thread
// starts, so every thread inherits the blocked mask; then
// WaitForShutdownSignal() in the main thread returns the signal once one
// arrives, and main() shuts the server down in order.
#ifndef FENCEGATE_COMMON_SIGNALS_H_
#define FENCEGATE_COMMON_SIGNALS_H_

namespace fencegate {

void BlockShutdownSignals();
int WaitForShutdownSignal();

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SIGNALS_H_
