#include "tests/torture/planted_bugs.h"

#include "absl/strings/str_cat.h"
#include "tests/torture/election_checker.h"
#include "tests/torture/history_checker.h"

namespace fencegate::torture {
namespace {

ScheduleProfile Profile(const std::string& name, const std::string& bug) {
  ScheduleProfile profile = *ProfileNamed(name);
  profile.name = absl::StrCat(name, " with planted bug ", bug);
  profile.planted_bug = bug;
  return profile;
}

std::vector<PlantedBugCase> MakeCases() {
  std::vector<PlantedBugCase> cases;
  cases.push_back({"gateway_accepts_max_minus_one",
                   "the gateway accepts a token one below the fence (and lowers it)",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Profile("races", "gateway_accepts_max_minus_one"),
                   /*in_postgres=*/true});
  cases.push_back({"gateway_fence_check_separate_transaction",
                   "the fence is checked in its own transaction, apart from the one "
                   "that writes: ops of one batch all pass against the old fence",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Profile("races", "gateway_fence_check_separate_transaction")});
  cases.push_back({"gateway_fenced_read_no_raise",
                   "a fenced read checks the fence but does not raise it",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Profile("races", "gateway_fenced_read_no_raise")});
  cases.push_back({"gateway_fence_only_in_memory",
                   "the fence lives only in memory: a restart forgets it",
                   {kFenceNeverBelowAcknowledged},
                   Profile("gateway-restart", "gateway_fence_only_in_memory")});
  // The cache is SQLite's only (the sole writer of its fences): caught in
  // one batch (the cache knows only committed fences) and after a restart
  // (it starts empty).
  cases.push_back({"gateway_fence_cache_trusted",
                   "the gateway's fence cache is trusted for acceptances: a token at "
                   "or above the fence it knows is applied without the storage's check",
                   {kNoLostUpdate, kFenceNeverBelowAcknowledged},
                   Profile("races", "gateway_fence_cache_trusted")});
  cases.push_back({"lock_token_replied_before_commit",
                   "the lock service answers before its commit: a crash takes back "
                   "tokens it handed out",
                   {kTokensUnique, kTokensIncreaseInRealTime, kLeasesDoNotOverlap},
                   Profile("lock-crashes", "lock_token_replied_before_commit")});
  cases.push_back({"lock_leases_forgotten_on_restart",
                   "a restarted lock service forgets the leases it had granted",
                   {kLeasesDoNotOverlap},
                   Profile("lock-restarts", "lock_leases_forgotten_on_restart")});
  // The kinds of lock (docs/semantics.md, "Kinds of lock").
  cases.push_back({"lock_shared_beside_exclusive",
                   "a shared lease is granted while an exclusive one is held",
                   {kLeasesDoNotOverlap},
                   Profile("kinds-contention", "lock_shared_beside_exclusive")});
  cases.push_back({"lock_permit_past_n",
                   "a semaphore of N permits grants one more than N",
                   {kPermitsAtMostN},
                   Profile("kinds-contention", "lock_permit_past_n")});
  cases.push_back({"lock_multi_partial_grant",
                   "a multi-resource try-lock that finds one resource taken grants "
                   "the free ones before it anyway, and answers 'not acquired'",
                   {kRefusedAcquireHoldsNothing, kLeasesDoNotOverlap},
                   Profile("kinds-contention", "lock_multi_partial_grant")});
  cases.push_back({"lock_proclaim_after_term",
                   "a Proclaim whose term has ended is applied to the term that leads "
                   "now: a deposed leader speaks for its successor",
                   {kElectionValuesFromTheirTerm},
                   Profile("elections-paused-leaders", "lock_proclaim_after_term")});
  cases.push_back({"gateway_shared_read_unfenced",
                   "the gateway serves a shared token's fenced read without checking "
                   "the fence",
                   {kSharedReadSeesNoNewerWrite},
                   Profile("kinds-paused-readers", "gateway_shared_read_unfenced")});
  // Both servers' (tests/torture/planted_disk_bug.cc): a failed fsync
  // retried and acknowledged, then lost at the power cut that follows.
  cases.push_back({"disk_fsync_retry",
                   "a server retries a failed fsync and acknowledges: the next power "
                   "cut takes back what it acknowledged",
                   {kAcknowledgedWritesSurvive, kNoLostUpdate, kAppendLogExact,
                    kFenceNeverBelowAcknowledged, kTokensUnique,
                    kTokensIncreaseInRealTime, kLeasesDoNotOverlap},
                   Profile("disk-fsync", "disk_fsync_retry")});
  // A SQL worker's, not a server's (topology postgres-two-gateways).
  cases.push_back(
      {"sql_worker_skips_fence",
       "a SQL worker writes the gateways' rows without fencegate_fence: a "
       "paused holder's late increment commits",
       {kNoLostUpdate, kFenceNeverBelowAcknowledged, kStaleWriteThroughAnotherGateway},
       Profile("sql-pauses", "sql_worker_skips_fence"),
       /*in_postgres=*/true});
  // The lock service on etcd (topology etcd-cluster).
  cases.push_back({"lock_leader_grants_without_session",
                   "a leader whose etcd session is gone keeps its term and, when etcd "
                   "refuses or cannot confirm a commit, answers from memory",
                   {kTokensUnique, kLeasesDoNotOverlap, kTokensIncreaseAcrossLeaders},
                   Profile("etcd-leader-pauses", "lock_leader_grants_without_session"),
                   /*in_postgres=*/true});
  cases.push_back({"lock_standby_answers_locally",
                   "a standby answers calls from a lock table of its own instead of "
                   "forwarding them to the leader",
                   {kTokensUnique, kLeasesDoNotOverlap, kTokensIncreaseAcrossLeaders},
                   Profile("etcd-standbys", "lock_standby_answers_locally"),
                   /*in_postgres=*/true});
  cases.push_back({"lock_term_guard_off",
                   "the leader's commits are not guarded by its term in etcd",
                   {kTokensUnique, kLeasesDoNotOverlap, kTokensIncreaseAcrossLeaders},
                   Profile("etcd-leader-pauses", "lock_term_guard_off"),
                   /*in_postgres=*/true});
  cases.push_back({"gateway_follower_skips_catch_up",
                   "a gateway's fence follower that reconnects skips the positions the "
                   "lock service replays (it applies only live ones)",
                   {kGrantTimeFenceReachesGateways},
                   Profile("etcd-fence-feed-cuts", "gateway_follower_skips_catch_up"),
                   /*in_postgres=*/true});
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
