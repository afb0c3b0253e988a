#include "tests/torture/run_summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {

void RunSummary::Add(const Schedule& schedule, const RunResult& result,
                     absl::Duration took, bool run_dir_kept) {
  if (schedules_++ == 0) first_seed_ = schedule.seed;
  last_seed_ = schedule.seed;
  gateways_ = schedule.profile.topology.gateways;
  replicated_ = schedule.profile.topology.replicated();
  disk_ = schedule.profile.disk_faults;
  sql_workers_ = schedule.profile.sql_workers > 0;
  kinds_ = schedule.profile.shared_rounds + schedule.profile.permit_rounds +
               schedule.profile.multi_rounds >
           0;
  elections_ = schedule.profile.elect_rounds > 0;
  holder_kills_ = schedule.profile.holder_kills > 0;
  const FaultTally& f = result.faults;
  const CheckStats& s = result.check.stats;
  out_ << absl::StrFormat(
              "schedule seed %d (%s): %d/%d faults delivered: %d pauses (%d past TTL, %d "
              "before a write), %d races (%d with a rival%s), %d kills, %d stops, %d "
              "failpoint crashes, %d clock jumps%s; acquires %d ok; writes %d ok, %d "
              "refused, %d unknown (%d applied)%s%s; %d violations, %d errors [%s] %.0fs",
              schedule.seed, schedule.secure ? "signed, grant-time fencing" : "plain",
              f.delivered, f.promised, f.pauses, f.pauses_past_ttl, f.pauses_before_write,
              f.stale_writer_races, f.races_with_rival, AcrossGateways(f), f.kills,
              f.server_stops, f.failpoint_crashes, f.clock_jumps,
              absl::StrCat(Replicated(f), Disk(f), HolderKills(f)), s.acquires_ok,
              s.writes_ok, s.writes_refused, s.writes_unknown, s.writes_unknown_applied,
              SqlWrites(s), absl::StrCat(Kinds(s), Elections(s)),
              result.check.violations.size(),
              result.errors.size() + f.errors.size() + f.undelivered.size(),
              result.passed() ? "PASS" : "FAIL", absl::ToDoubleSeconds(took))
       << std::endl;
  for (const Violation& v : result.check.violations) {
    out_ << "  VIOLATION " << v.invariant << ": " << v.detail << "\n";
  }
  for (const std::string& e : result.errors) out_ << "  ERROR " << e << "\n";
  for (const std::string& e : f.errors) out_ << "  ERROR " << e << "\n";
  for (const std::string& u : f.undelivered) out_ << "  UNDELIVERED " << u << "\n";
  if (run_dir_kept) out_ << "  run directory kept: " << result.run_dir << "\n";
  out_ << std::flush;

  faults_.promised += f.promised;
  faults_.delivered += f.delivered;
  faults_.pauses += f.pauses;
  faults_.pauses_past_ttl += f.pauses_past_ttl;
  faults_.pauses_before_write += f.pauses_before_write;
  faults_.stale_writer_races += f.stale_writer_races;
  faults_.races_with_rival += f.races_with_rival;
  faults_.races_across_gateways += f.races_across_gateways;
  faults_.kills += f.kills;
  faults_.server_stops += f.server_stops;
  faults_.failpoint_crashes += f.failpoint_crashes;
  faults_.clock_jumps += f.clock_jumps;
  for (int FaultTally::*counter : {&FaultTally::holder_kills,
                                   &FaultTally::leader_kills,
                                   &FaultTally::leader_stops,
                                   &FaultTally::leader_pauses_past_ttl,
                                   &FaultTally::leader_commits_refused,
                                   &FaultTally::etcd_kills,
                                   &FaultTally::etcd_leader_kills,
                                   &FaultTally::etcd_stops,
                                   &FaultTally::etcd_leader_stops,
                                   &FaultTally::quorum_losses,
                                   &FaultTally::partitions,
                                   &FaultTally::leader_cuts,
                                   &FaultTally::etcd_isolations,
                                   &FaultTally::etcd_splits,
                                   &FaultTally::fence_feed_cuts,
                                   &FaultTally::fence_feed_cuts_past_streams,
                                   &FaultTally::worker_cuts,
                                   &FaultTally::disk_fulls,
                                   &FaultTally::fsync_failures,
                                   &FaultTally::write_failures,
                                   &FaultTally::fail_stops,
                                   &FaultTally::power_cuts}) {
    faults_.*counter += f.*counter;
  }
  stats_.writes_ok += s.writes_ok;
  stats_.writes_refused += s.writes_refused;
  stats_.writes_unknown += s.writes_unknown;
  stats_.sql_writes_ok += s.sql_writes_ok;
  stats_.sql_writes_refused += s.sql_writes_refused;
  stats_.sql_writes_unknown += s.sql_writes_unknown;
  stats_.acquires_ok += s.acquires_ok;
  stats_.leases += s.leases;
  stats_.shared_leases += s.shared_leases;
  stats_.permit_leases += s.permit_leases;
  stats_.shared_reads_ok += s.shared_reads_ok;
  stats_.shared_reads_refused += s.shared_reads_refused;
  stats_.lock_service_loads += s.lock_service_loads;
  stats_.leaders += s.leaders;
  stats_.terms += s.terms;
  stats_.proclaims_ok += s.proclaims_ok;
  stats_.proclaims_refused += s.proclaims_refused;
  stats_.proclaims_unknown += s.proclaims_unknown;
  stats_.changes_observed += s.changes_observed;
  violations_ += static_cast<int>(result.check.violations.size());
  errors_ += static_cast<int>(result.errors.size() + f.errors.size() + f.undelivered.size());
  if (!result.passed()) failed_seeds_.push_back(schedule.seed);
}

std::string RunSummary::AcrossGateways(const FaultTally& faults) const {
  if (gateways_ == 1) return "";
  return absl::StrCat(", ", faults.races_across_gateways, " of them through another gateway");
}

std::string RunSummary::SqlWrites(const CheckStats& s) const {
  if (!sql_workers_) return "";
  return absl::StrFormat("; SQL increments: %d ok, %d refused, %d unknown",
                         s.sql_writes_ok, s.sql_writes_refused, s.sql_writes_unknown);
}

std::string RunSummary::Kinds(const CheckStats& s) const {
  if (!kinds_) return "";
  return absl::StrFormat(
      "; kinds: %d shared leases (%d shared reads ok, %d refused), %d permits",
      s.shared_leases, s.shared_reads_ok, s.shared_reads_refused, s.permit_leases);
}

std::string RunSummary::Elections(const CheckStats& s) const {
  if (!elections_) return "";
  return absl::StrFormat(
      "; elections: %d terms, proclaims %d ok, %d refused, %d unknown; %d changes "
      "observed",
      s.terms, s.proclaims_ok, s.proclaims_refused, s.proclaims_unknown,
      s.changes_observed);
}

std::string RunSummary::Replicated(const FaultTally& f) const {
  if (!replicated_) return "";
  return absl::StrFormat(
      "; lock-service leader: %d kills, %d stops, %d paused past its session TTL with a "
      "commit in flight (%d refused by the term guard); etcd: %d kills (%d of the "
      "leader), "
      "%d stops (%d of the leader), %d quorum losses; %d partitions (%d leader from "
      "etcd, "
      "%d etcd member isolated, %d etcd 2/1 splits, %d fence-feed cuts (%d until the "
      "streams ended), %d workers cut from the lock service)",
      f.leader_kills, f.leader_stops, f.leader_pauses_past_ttl, f.leader_commits_refused,
      f.etcd_kills, f.etcd_leader_kills, f.etcd_stops, f.etcd_leader_stops,
      f.quorum_losses, f.partitions, f.leader_cuts, f.etcd_isolations, f.etcd_splits,
      f.fence_feed_cuts, f.fence_feed_cuts_past_streams, f.worker_cuts);
}

std::string RunSummary::HolderKills(const FaultTally& f) const {
  if (!holder_kills_) return "";
  return absl::StrFormat("; %d lock holders killed (kill -9) and started again",
                         f.holder_kills);
}

std::string RunSummary::Disk(const FaultTally& f) const {
  if (!disk_) return "";
  return absl::StrFormat(
      "; disks: %d full, %d failed fsyncs, %d failed writes (%d servers stopped "
      "themselves), %d power cuts",
      f.disk_fulls, f.fsync_failures, f.write_failures, f.fail_stops, f.power_cuts);
}

std::string RunSummary::Line(const std::string& profile, bool passed) const {
  const FaultTally& f = faults_;
  return absl::StrFormat(
      "torture: %d schedules (seeds %d..%d, profile %s): %d/%d faults delivered: %d "
      "pauses of "
      "lock holders (%d past their TTL, %d before a write), %d stale-writer races (%d "
      "with "
      "a rival%s), %d kills, %d failpoint crashes, %d server stops, %d clock jumps%s; %d "
      "leases acquired, %d writes acknowledged, %d stale writes refused, %d unknown%s%s; "
      "%d "
      "violations, %d errors: %s",
      schedules_, first_seed_, last_seed_, profile, f.delivered, f.promised, f.pauses,
      f.pauses_past_ttl, f.pauses_before_write, f.stale_writer_races, f.races_with_rival,
      AcrossGateways(f), f.kills, f.failpoint_crashes, f.server_stops, f.clock_jumps,
      absl::StrCat(Replicated(f), Disk(f), HolderKills(f)), stats_.acquires_ok,
      stats_.writes_ok, stats_.writes_refused, stats_.writes_unknown,
      replicated_
          ? absl::StrFormat(" (%d lease intervals; %d terms of the lock service, "
                            "%d leader changes)",
                            stats_.leases, stats_.lock_service_loads, stats_.leaders)
          : "",
      absl::StrCat(SqlWrites(stats_), Kinds(stats_), Elections(stats_)), violations_,
      errors_, passed ? "PASS" : "FAIL");
}

}  // namespace fencegate::torture
