// FaultTally: what a torture run's FaultInjector (fault_injector.h)
// promised and delivered, counted by kind, for the run's verdict and its
// summary lines (run_summary.h).
//
// Thread safety: a plain value.
#ifndef FENCEGATE_TESTS_TORTURE_FAULT_TALLY_H_
#define FENCEGATE_TESTS_TORTURE_FAULT_TALLY_H_

#include <string>
#include <vector>

namespace fencegate::torture {

struct FaultTally {
  int promised = 0;
  int delivered = 0;
  int pauses = 0;               // of lock holders, races included
  int holder_kills = 0;         // kill -9 of lock holders, each started again
  int pauses_past_ttl = 0;      // longer than the lease's TTL
  int pauses_before_write = 0;  // at the worst moment, races included
  int stale_writer_races = 0;
  int races_with_rival = 0;       // the successor's fenced read was waiting too
  int races_across_gateways = 0;  // ... sent to another gateway than the stale write
  int kills = 0;                  // kill -9 and restart
  int server_stops = 0;
  int failpoint_crashes = 0;
  int clock_jumps = 0;
  // The replicated topology's (schedule.h):
  int leader_kills = 0;  // of kills: the lock-service leader's
  int leader_stops = 0;  // of server_stops: the leader's
  int leader_pauses_past_ttl = 0;
  int leader_commits_refused = 0;  // ... whose in-flight commit the term guard refused
  int etcd_kills = 0;              // kill -9 of a member
  int etcd_leader_kills = 0;       // ... of the etcd leader
  int etcd_stops = 0;
  int etcd_leader_stops = 0;
  int quorum_losses = 0;
  int partitions = 0;   // every cut below
  int leader_cuts = 0;  // the lock-service leader from etcd
  int etcd_isolations = 0;
  int etcd_splits = 0;
  int fence_feed_cuts = 0;
  int fence_feed_cuts_past_streams = 0;  // held until the streams ended
  int worker_cuts = 0;
  // The disk faults' (ScheduleProfile::disk_faults):
  int disk_fulls = 0;
  int fsync_failures = 0;
  int write_failures = 0;
  int fail_stops = 0;  // servers that stopped themselves on one (exit 74)
  int power_cuts = 0;  // restarts of a server under the preload
  std::vector<std::string> undelivered;
  std::vector<std::string> errors;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FAULT_TALLY_H_
