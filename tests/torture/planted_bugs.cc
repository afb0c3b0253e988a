#include "tests/torture/planted_bugs.h"

#include "tests/torture/history_checker.h"

namespace fencegate::torture {
namespace {

ScheduleProfile Quiet(const std::string& bug) {
  ScheduleProfile profile;
  profile.name = bug;
  profile.planted_bug = bug;
  profile.traffic = absl::Seconds(10);
  profile.holder_pauses = 0;
  profile.pauses_before_write = 0;
  profile.stale_writer_races = 0;
  profile.lockservice = ServerFaults{0, 0, 0, 0, {}};
  profile.gateway = ServerFaults{0, 0, 0, 0, {}};
  return profile;
}

// Stale writers racing their successors' fenced reads through a stalled
// commit, on one hot resource (so a successor's token is the next one).
ScheduleProfile Races(const std::string& bug) {
  ScheduleProfile profile = Quiet(bug);
  profile.resources = 1;
  profile.traffic = absl::Seconds(12);
  profile.max_ttl = absl::Seconds(2);
  profile.stale_writer_races = 3;
  return profile;
}

std::vector<PlantedBugCase> MakeCases() {
  std::vector<PlantedBugCase> cases;
  cases.push_back({"gateway_accepts_max_minus_one",
                   "the gateway accepts a token one below the fence (and lowers it)",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Races("gateway_accepts_max_minus_one")});
  cases.push_back({"gateway_fence_check_separate_transaction",
                   "the fence is checked in its own transaction, apart from the one "
                   "that writes: ops of one batch all pass against the old fence",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Races("gateway_fence_check_separate_transaction")});
  cases.push_back({"gateway_fenced_read_no_raise",
                   "a fenced read checks the fence but does not raise it",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Races("gateway_fenced_read_no_raise")});
  {
    ScheduleProfile profile = Quiet("gateway_fence_only_in_memory");
    profile.traffic = absl::Seconds(8);
    profile.gateway.kill_restarts = 1;
    cases.push_back({"gateway_fence_only_in_memory",
                     "the fence lives only in memory: a restart forgets it",
                     {kFenceNeverBelowAcknowledged}, profile});
  }
  {
    ScheduleProfile profile = Quiet("lock_token_replied_before_commit");
    profile.lockservice.failpoint_crashes = 3;
    profile.lockservice.failpoints = {"lock.before_commit"};
    cases.push_back({"lock_token_replied_before_commit",
                     "the lock service answers before its commit: a crash takes back "
                     "tokens it handed out",
                     {kTokensUnique, kTokensIncreaseInRealTime, kLeasesDoNotOverlap},
                     profile});
  }
  {
    ScheduleProfile profile = Quiet("lock_leases_forgotten_on_restart");
    profile.resources = 2;
    profile.lockservice.kill_restarts = 3;
    cases.push_back({"lock_leases_forgotten_on_restart",
                     "a restarted lock service forgets the leases it had granted",
                     {kLeasesDoNotOverlap}, profile});
  }
  return cases;
}

}  // namespace

const std::vector<PlantedBugCase>& PlantedBugCases() {
  static const auto* cases = new std::vector<PlantedBugCase>(MakeCases());
  return *cases;
}

const PlantedBugCase* FindPlantedBug(const std::string& name) {
  for (const PlantedBugCase& c : PlantedBugCases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace fencegate::torture
