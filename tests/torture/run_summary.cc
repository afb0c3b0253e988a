#include "tests/torture/run_summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {

void RunSummary::Add(const Schedule& schedule, const RunResult& result,
                     absl::Duration took, bool run_dir_kept) {
  if (schedules_++ == 0) first_seed_ = schedule.seed;
  last_seed_ = schedule.seed;
  gateways_ = schedule.profile.topology.gateways;
  const FaultTally& f = result.faults;
  const CheckStats& s = result.check.stats;
  out_ << absl::StrFormat(
                   "schedule seed %d (%s): %d/%d faults delivered: %d pauses (%d past TTL, %d "
                   "before a write), %d races (%d with a rival%s), %d kills, %d stops, %d "
                   "failpoint crashes, %d clock jumps; acquires %d ok; writes %d ok, %d "
                   "refused, %d unknown (%d applied); %d violations, %d errors [%s] %.0fs",
                   schedule.seed, schedule.secure ? "signed, grant-time fencing" : "plain",
                   f.delivered, f.promised, f.pauses, f.pauses_past_ttl,
                   f.pauses_before_write, f.stale_writer_races, f.races_with_rival,
                   AcrossGateways(f), f.kills,
                   f.server_stops, f.failpoint_crashes, f.clock_jumps, s.acquires_ok,
                   s.writes_ok, s.writes_refused, s.writes_unknown, s.writes_unknown_applied,
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
  stats_.writes_ok += s.writes_ok;
  stats_.writes_refused += s.writes_refused;
  stats_.writes_unknown += s.writes_unknown;
  stats_.acquires_ok += s.acquires_ok;
  violations_ += static_cast<int>(result.check.violations.size());
  errors_ += static_cast<int>(result.errors.size() + f.errors.size() + f.undelivered.size());
  if (!result.passed()) failed_seeds_.push_back(schedule.seed);
}

std::string RunSummary::AcrossGateways(const FaultTally& faults) const {
  if (gateways_ == 1) return "";
  return absl::StrCat(", ", faults.races_across_gateways, " of them through another gateway");
}

std::string RunSummary::Line(const std::string& profile, bool passed) const {
  const FaultTally& f = faults_;
  return absl::StrFormat(
      "torture: %d schedules (seeds %d..%d, profile %s): %d/%d faults delivered: %d pauses of "
      "lock holders (%d past their TTL, %d before a write), %d stale-writer races (%d with "
      "a rival%s), %d kills, %d failpoint crashes, %d server stops, %d clock jumps; %d leases "
      "acquired, %d writes acknowledged, %d stale writes refused, %d unknown; %d violations, "
      "%d errors: %s",
      schedules_, first_seed_, last_seed_, profile, f.delivered, f.promised, f.pauses,
      f.pauses_past_ttl, f.pauses_before_write, f.stale_writer_races, f.races_with_rival,
      AcrossGateways(f), f.kills, f.failpoint_crashes, f.server_stops, f.clock_jumps,
      stats_.acquires_ok, stats_.writes_ok, stats_.writes_refused, stats_.writes_unknown, violations_, errors_,
      passed ? "PASS" : "FAIL");
}

}  // namespace fencegate::torture
