// FaultInjector's faults on the servers: kill -9 and restart, SIGSTOP,
// failpoint crashes, wall-clock jumps (see fault_injector.h, schedule.h).
#include <sys/wait.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_hooks/test_hooks.h"
#include "tests/torture/fault_injector.h"

namespace fencegate::torture {

std::string FaultInjector::KillRestart(const Fault& fault, ServerNode& server) {
  server.Kill();
  absl::SleepFor(fault.duration);
  Restart(server);
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
  // A replicated lock service's leader may change while the fault waits for
  // a commit: every instance is armed, and only the one that leads commits.
  const std::vector<ServerNode*> armed = fault.role == Role::kLeader
                                             ? cluster_->lockservices()
                                             : std::vector<ServerNode*>{&server};
  for (ServerNode* s : armed) s->Arm("crash", fault.failpoint);
  ServerNode* crashed = nullptr;
  absl::StatusOr<int> exit = absl::DeadlineExceededError("no exit yet");
  auto find_exit = [&] {
    for (ServerNode* s : armed) {
      exit = s->WaitForExit(absl::ZeroDuration());
      if (exit.ok()) {
        crashed = s;
        return true;
      }
    }
    return false;
  };
  // Workers keep committing, so some commit reaches the failpoint soon.
  // Once one instance has, the others are disarmed at once, within its
  // crash delay: a successor that led and committed before the first one's
  // exit was seen would crash too (found in CI: two instances crashed).
  const absl::Time give_up = absl::Now() + reach_timeout_;
  bool others_disarmed = armed.size() == 1;
  while (!find_exit() && absl::Now() < give_up) {
    for (ServerNode* s : armed) {
      if (others_disarmed || !s->FailpointReached()) continue;
      for (ServerNode* other : armed) {
        if (other != s) other->Disarm();
      }
      others_disarmed = true;
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  for (ServerNode* s : armed) s->Disarm();
  // It may have reached the failpoint just as it was disarmed.
  if (crashed == nullptr) {
    absl::SleepFor(test_hooks::kFailpointCrashDelay * 3);
    find_exit();
  }
  if (crashed == nullptr) return "no commit reached the failpoint";
  if (armed.size() > 1)
    Log(absl::StrCat(crashed->name(), " crashed at ", fault.failpoint));
  if (!WIFEXITED(*exit) || WEXITSTATUS(*exit) != test_hooks::kFailpointExitCode) {
    Error(absl::StrCat("the ", crashed->name(), " died while armed at ", fault.failpoint,
                       " but not at it: ", testing::DescribeWaitStatus(*exit), "\n",
                       crashed->LogTail()));
  } else {
    Count(&FaultTally::failpoint_crashes);
  }
  Restart(*crashed);
  return "";
}

std::string FaultInjector::ClockJump(const Fault& fault, ServerNode& server) {
  server.SetClockOffset(fault.clock_offset);
  absl::SleepFor(fault.duration);
  server.SetClockOffset(absl::ZeroDuration());
  Count(&FaultTally::clock_jumps);
  return "";
}

}  // namespace fencegate::torture
