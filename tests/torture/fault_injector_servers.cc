// FaultInjector's faults on the servers: kill -9 and restart, SIGSTOP,
// failpoint crashes, wall-clock jumps (see fault_injector.h, schedule.h).
#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_hooks.h"
#include "tests/torture/fault_injector.h"

namespace fencegate::torture {

std::string FaultInjector::KillRestart(const Fault& fault, ServerNode& server) {
  server.Kill();
  absl::SleepFor(fault.duration);
  absl::Status started = server.Start();
  if (!started.ok()) {
    Error(absl::StrCat("restarting the ", server.name(), " failed: ", started.ToString()));
  }
  Count(&FaultTally::kills);
  if (fault.role == Role::kLeader) Count(&FaultTally::leader_kills);
  return "";
}

std::string FaultInjector::StopServer(const Fault& fault, ServerNode& server) {
  absl::Status stopped = server.Stop();
  if (!stopped.ok()) return stopped.ToString();
  absl::SleepFor(fault.duration);
  server.Continue();
  Count(&FaultTally::server_stops);
  if (fault.role == Role::kLeader) Count(&FaultTally::leader_stops);
  return "";
}

std::string FaultInjector::FailpointCrash(const Fault& fault, ServerNode& server) {
  server.Arm("crash", fault.failpoint);
  // Workers keep committing, so some commit reaches the failpoint soon.
  absl::StatusOr<int> exit = server.WaitForExit(reach_timeout_);
  server.Disarm();
  // It may have reached the failpoint just as it was disarmed.
  if (!exit.ok()) exit = server.WaitForExit(test_hooks::kFailpointCrashDelay * 3);
  std::string missed;
  if (!exit.ok()) {
    missed = "no commit reached the failpoint";
  } else if (!WIFEXITED(*exit) || WEXITSTATUS(*exit) != test_hooks::kFailpointExitCode) {
    Error(absl::StrCat("the ", server.name(), " died while armed at ", fault.failpoint,
                       " but not at it: ", testing::DescribeWaitStatus(*exit), "\n",
                       server.LogTail()));
  } else {
    Count(&FaultTally::failpoint_crashes);
  }
  if (exit.ok()) {
    absl::Status started = server.Start();
    if (!started.ok()) {
      Error(absl::StrCat("restarting the ", server.name(), " failed: ", started.ToString()));
    }
  }
  return missed;
}

std::string FaultInjector::ClockJump(const Fault& fault, ServerNode& server) {
  server.SetClockOffset(fault.clock_offset);
  absl::SleepFor(fault.duration);
  server.SetClockOffset(absl::ZeroDuration());
  Count(&FaultTally::clock_jumps);
  return "";
}

}  // namespace fencegate::torture
