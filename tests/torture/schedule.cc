#include "tests/torture/schedule.h"

#include <algorithm>
#include <random>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {
namespace {

absl::Duration Between(std::mt19937_64& random, absl::Duration low, absl::Duration high) {
  return absl::Milliseconds(absl::Uniform<int64_t>(
      absl::IntervalClosed, random, absl::ToInt64Milliseconds(low),
      absl::ToInt64Milliseconds(high)));
}

std::string TargetName(const Schedule& schedule, const Fault& fault) {
  switch (fault.target) {
    case Target::kLockService:
      return "lockservice";
    case Target::kGateway:
      return GatewayName(schedule.profile.topology, fault.gateway);
    case Target::kWorker:
      return "worker";
  }
  return "?";
}

}  // namespace

Schedule MakeSchedule(const ScheduleProfile& profile, uint64_t seed) {
  Schedule schedule;
  schedule.seed = seed;
  schedule.profile = profile;
  schedule.secure = profile.security == Security::kSecure ||
                    (profile.security == Security::kAlternate && seed % 2 == 1);
  std::mt19937_64 random(seed);
  // Faults fall after a second of warm-up and end two seconds before the
  // traffic does.
  const absl::Duration first = absl::Seconds(1);
  const absl::Duration last = std::max(profile.traffic - absl::Seconds(2), first);
  auto add = [&](FaultKind kind, Target target) -> Fault& {
    Fault& fault = schedule.faults.emplace_back();
    fault.kind = kind;
    fault.target = target;
    fault.at = Between(random, first, last);
    return fault;
  };

  // Pauses go to the workers in a shuffled order, so they spread out.
  std::vector<int> order(profile.workers);
  for (int i = 0; i < profile.workers; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), random);
  for (int i = 0; i < profile.holder_pauses + profile.pauses_before_write; ++i) {
    Fault& fault = add(i < profile.holder_pauses ? FaultKind::kPauseHolder
                                                 : FaultKind::kPauseBeforeWrite,
                       Target::kWorker);
    fault.worker = order[i % profile.workers];
    fault.ttl_factor = absl::Uniform(absl::IntervalClosed, random, 0.2, 5.0);
  }
  // Races take turns over the gateways; each one's stale writer is one of
  // the workers of its gateway (worker i talks to gateway i % gateways).
  // With one gateway the draws are exactly those of a single-gateway
  // schedule, so old seeds replay as they did.
  const int gateways = profile.topology.gateways;
  for (int i = 0; i < profile.stale_writer_races; ++i) {
    Fault& fault = add(FaultKind::kStaleWriterRace, Target::kGateway);
    fault.gateway = i % gateways;
    const int drawn = absl::Uniform(random, 0, profile.workers);
    fault.worker = drawn - drawn % gateways + fault.gateway;
    if (fault.worker >= profile.workers) fault.worker -= gateways;
    fault.release_by_operator =
        !schedule.secure && absl::Bernoulli(random, profile.release_by_operator);
  }
  for (int server = -1; server < gateways; ++server) {  // -1: the lock service
    const Target target = server < 0 ? Target::kLockService : Target::kGateway;
    const ServerFaults& faults = server < 0 ? profile.lockservice : profile.gateway;
    auto add_server = [&](FaultKind kind) -> Fault& {
      Fault& fault = add(kind, target);
      if (server >= 0) fault.gateway = server;
      return fault;
    };
    for (int i = 0; i < faults.kill_restarts; ++i) {
      add_server(FaultKind::kKillRestart).duration =
          Between(random, absl::ZeroDuration(), absl::Seconds(2));
    }
    for (int i = 0; i < faults.stops; ++i) {
      add_server(FaultKind::kStopServer).duration =
          Between(random, absl::Milliseconds(500), absl::Seconds(3));
    }
    for (int i = 0; i < faults.failpoint_crashes && !faults.failpoints.empty(); ++i) {
      add_server(FaultKind::kFailpointCrash).failpoint =
          faults.failpoints[absl::Uniform<size_t>(random, 0, faults.failpoints.size())];
    }
    for (int i = 0; i < faults.clock_jumps; ++i) {
      Fault& fault = add_server(FaultKind::kClockJump);
      fault.clock_offset = Between(random, absl::Minutes(1), absl::Hours(24)) *
                           (absl::Uniform(random, 0, 2) == 0 ? -1 : 1);
      fault.duration = Between(random, absl::Milliseconds(500), absl::Seconds(2));
    }
  }
  std::stable_sort(schedule.faults.begin(), schedule.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  return schedule;
}

std::string ResourceName(int index) { return absl::StrCat("hot-", index); }

std::string GatewayName(const Topology& topology, int index) {
  return topology.gateways == 1 ? "gateway" : absl::StrCat("gateway-", index);
}

int PromisedFaults(const Schedule& schedule) {
  return static_cast<int>(schedule.faults.size());
}

std::string DescribeFault(const Schedule& schedule, const Fault& fault) {
  const std::string at = absl::StrFormat("+%.1fs", absl::ToDoubleSeconds(fault.at));
  const std::string worker = absl::StrCat("w", fault.worker);
  switch (fault.kind) {
    case FaultKind::kPauseHolder:
      return absl::StrFormat("%s pause %s while it holds a lease, %.1fx its TTL", at, worker,
                             fault.ttl_factor);
    case FaultKind::kPauseBeforeWrite:
      return absl::StrFormat("%s pause %s between its lease check and its write, %.1fx its TTL",
                             at, worker, fault.ttl_factor);
    case FaultKind::kStaleWriterRace:
      return absl::StrCat(at, " stale-writer race: a holder stopped before its write (",
                          worker, " or the next worker free",
                          schedule.profile.topology.gateways == 1
                              ? ""
                              : absl::StrCat(" of ", TargetName(schedule, fault)),
                          ") resumes it into the gateway commit its successor's fenced "
                          "read waits in",
                          fault.release_by_operator ? "; an operator releases its lease" : "");
    case FaultKind::kKillRestart:
      return absl::StrCat(at, " kill -9 the ", TargetName(schedule, fault), ", restart after ",
                          absl::FormatDuration(fault.duration));
    case FaultKind::kStopServer:
      return absl::StrCat(at, " SIGSTOP the ", TargetName(schedule, fault), " for ",
                          absl::FormatDuration(fault.duration));
    case FaultKind::kFailpointCrash:
      return absl::StrCat(at, " crash the ", TargetName(schedule, fault), " at failpoint ",
                          fault.failpoint);
    case FaultKind::kClockJump:
      return absl::StrCat(at, " the ", TargetName(schedule, fault), "'s wall clock jumps ",
                          fault.clock_offset < absl::ZeroDuration() ? "back " : "ahead ",
                          absl::FormatDuration(absl::AbsDuration(fault.clock_offset)), " for ",
                          absl::FormatDuration(fault.duration));
  }
  return at;
}

absl::StatusOr<ScheduleProfile> ProfileNamed(const std::string& name) {
  ScheduleProfile profile;
  profile.name = name;
  if (name == "default") return profile;
  if (name == "postgres-two-gateways") {
    // Workers split over two gateways on one PostgreSQL, on the default's
    // hot resources, so both gateways write the same rows; a race on each
    // gateway; PostgreSQL itself is never faulted.
    profile.topology = *TopologyNamed(name);
    profile.lockservice = ServerFaults{1, 0, 0, 0, {}};
    profile.gateway.clock_jumps = 0;
    return profile;
  }
  if (name == "quick") {
    profile.traffic = absl::Seconds(8);
    profile.holder_pauses = 1;
    profile.pauses_before_write = 1;
    profile.stale_writer_races = 1;
    return profile;
  }
  // The rest aim at one fault each, with no other faults around it, on the
  // plain fencing the planted bugs break (grant-time fencing would hide
  // some of them).
  profile.security = Security::kPlain;
  profile.traffic = absl::Seconds(10);
  profile.holder_pauses = 0;
  profile.pauses_before_write = 0;
  profile.stale_writer_races = 0;
  profile.lockservice = ServerFaults{0, 0, 0, 0, {}};
  profile.gateway = ServerFaults{0, 0, 0, 0, {}};
  if (name == "races") {
    // One hot resource, so the successor's token is the next one.
    profile.resources = 1;
    profile.traffic = absl::Seconds(12);
    profile.max_ttl = absl::Seconds(2);
    profile.stale_writer_races = 3;
    profile.release_by_operator = 1;
    return profile;
  }
  if (name == "lock-crashes") {
    // More resources than workers: after a crash some are free at once, so
    // new grants follow the restart without waiting for restored leases.
    profile.workers = 12;
    profile.resources = 16;
    profile.traffic = absl::Seconds(14);
    profile.lockservice.failpoint_crashes = 6;
    profile.lockservice.failpoints = {"lock.before_commit"};
    return profile;
  }
  if (name == "lock-restarts") {
    profile.resources = 2;
    profile.lockservice.kill_restarts = 3;
    return profile;
  }
  if (name == "gateway-restart") {
    profile.traffic = absl::Seconds(8);
    profile.gateway.kill_restarts = 1;
    return profile;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --profile '", name,
      "'; one of: default, quick, races, lock-crashes, lock-restarts, gateway-restart, "
      "postgres-two-gateways"));
}

absl::StatusOr<Topology> TopologyNamed(const std::string& name) {
  if (name == "sqlite") return Topology();
  if (name == "postgres-two-gateways") {
    // Past the longest a gateway can hold a request: a race's stall (its
    // waits add up to about a minute at most), or a row another gateway
    // holds (at most PostgreSQL's idle_in_transaction_session_timeout, 30 s,
    // gateway/postgres_storage.h).
    return Topology{name, 2, GatewayStorage::kPostgres, absl::Seconds(120)};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --topology '", name, "'; one of: sqlite, postgres-two-gateways"));
}

}  // namespace fencegate::torture
