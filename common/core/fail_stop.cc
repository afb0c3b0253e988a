#include "common/core/fail_stop.h"

#include <unistd.h>

#include "common/base/log.h"

namespace fencegate {

void FailStop(absl::string_view why) {
  LogError("FATAL: %s; stopping now (exit status %d) so that nothing the disk may "
           "not hold is acknowledged: restart the server, it recovers from what the "
           "disk holds",
           why, kFailStopExitCode);
  _exit(kFailStopExitCode);
}

}  // namespace fencegate
