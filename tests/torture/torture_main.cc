// fencegate-torture: the fault-injection torture suite (docs/torture.md).
//
//   fencegate-torture --schedules=N --seed=S [--profile=default|quick|...]
//       runs N schedules (seeds S, S+1, ...), checks each history, prints a
//       line per schedule and a summary; exit 0 iff every schedule passed.
//   fencegate-torture --planted_bug=NAME --schedules=N
//       runs the bug's own schedules until the checker catches it; exit 0
//       iff it did, within N schedules.
//   --topology=postgres-two-gateways runs either on two gateways on one
//       PostgreSQL instead of the profile's own servers; --topology=
//       etcd-cluster on three lock-service instances on a three-member etcd
//       cluster and two gateways on PostgreSQL, every process on a host of
//       its own in a network of this run's (network namespaces; needs root).
//   fencegate-torture --check_dir=DIR
//       checks the histories of a kept run directory again.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "harness/network_namespaces.h"
#include "tests/torture/cluster.h"
#include "tests/torture/history_log.h"
#include "tests/torture/planted_bugs.h"
#include "tests/torture/run_summary.h"
#include "tests/torture/schedule_runner.h"

ABSL_FLAG(int, schedules, 0,
          "schedules to run (0: $FENCEGATE_TORTURE_SCHEDULES, else 1)");
ABSL_FLAG(uint64_t, seed, 0, "seed of the first schedule (0: $FENCEGATE_TORTURE_SEED, else random)");
ABSL_FLAG(int, shard, 0,
          "runs schedules from seed + 10000 * shard, so shards of one run do not repeat "
          "each other");
ABSL_FLAG(std::string, profile, "default",
          "schedule profile: default, quick, races, lock-crashes, lock-restarts, "
          "gateway-restart, postgres-two-gateways, sql-pauses, kinds, kinds-contention, "
          "kinds-paused-readers, etcd-cluster, etcd-quick, etcd-kinds");
ABSL_FLAG(std::string, topology, "",
          "the servers, overriding the profile's (or the planted bug's): sqlite (one "
          "gateway on a SQLite file), postgres-two-gateways (two gateways on one "
          "PostgreSQL) or etcd-cluster (three lock-service instances on three etcd "
          "members, two gateways on PostgreSQL; with no --profile, the etcd-cluster "
          "profile)");
ABSL_FLAG(int, seconds, 0, "traffic per schedule in seconds (0: the profile's)");
ABSL_FLAG(std::string, lockservice_failpoint, "",
          "failpoint crashes of the lock service all at this failpoint (default: the "
          "profile's choice of lock.before_commit, lock.after_commit)");
ABSL_FLAG(std::string, gateway_failpoint, "",
          "failpoint crashes of the gateway all at this failpoint (default: the profile's "
          "choice of gateway.before_commit, gateway.after_commit)");
ABSL_FLAG(absl::Duration, reach_timeout, absl::ZeroDuration(),
          "how long a fault waits for its moment before it counts as undelivered (0: "
          "the topology's: 30 s, 60 s on etcd-cluster)");
ABSL_FLAG(std::string, planted_bug, "",
          "run this planted bug's schedules; succeed iff the checker catches it");
ABSL_FLAG(std::string, work_dir, "", "where run directories go (default: $TMPDIR or /tmp)");
ABSL_FLAG(bool, keep, false, "keep run directories also of passing schedules");
ABSL_FLAG(std::string, check_dir, "", "only check the histories in this kept run directory");
ABSL_FLAG(bool, remove_stale_namespaces, false,
          "only remove the network namespaces that runs which no longer exist left "
          "behind (every run with --topology=etcd-cluster does so first)");
ABSL_FLAG(std::string, lockservice_bin, FENCEGATE_LOCKSERVICE_TORTURE_BIN,
          "test build of the lock service");
ABSL_FLAG(std::string, gateway_bin, FENCEGATE_GATEWAY_TORTURE_BIN, "test build of the gateway");
ABSL_FLAG(std::string, worker_bin, FENCEGATE_TORTURE_WORKER_BIN, "the worker binary");
ABSL_FLAG(std::string, faketime_library, "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
          "libfaketime, preloaded into the servers for wall-clock jumps");

namespace fencegate::torture {
namespace {

uint64_t FromEnv(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  uint64_t value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) && value > 0 ? value : fallback;
}

int CheckDirectory(const std::string& dir) {
  absl::StatusOr<History> history = LoadRunDirectory(dir);
  if (!history.ok()) {
    std::cerr << history.status() << "\n";
    return EXIT_FAILURE;
  }
  CheckResult result = CheckHistory(*history);
  for (const Violation& v : result.violations) {
    std::cout << "VIOLATION " << v.invariant << ": " << v.detail << "\n";
  }
  std::cout << dir << ": " << result.violations.size() << " violations\n";
  return result.ok() ? EXIT_SUCCESS : EXIT_FAILURE;
}

int Main() {
  if (!absl::GetFlag(FLAGS_check_dir).empty()) return CheckDirectory(absl::GetFlag(FLAGS_check_dir));
  if (absl::GetFlag(FLAGS_remove_stale_namespaces)) {
    absl::StatusOr<int> removed = testing::VirtualNetwork::RemoveStaleNamespaces();
    if (!removed.ok()) {
      std::cerr << removed.status() << "\n";
      return EXIT_FAILURE;
    }
    std::cout << "removed " << *removed << " stale network namespace(s)" << std::endl;
    return EXIT_SUCCESS;
  }

  const int schedules = absl::GetFlag(FLAGS_schedules) > 0
                            ? absl::GetFlag(FLAGS_schedules)
                            : static_cast<int>(FromEnv("FENCEGATE_TORTURE_SCHEDULES", 1));
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0) seed = FromEnv("FENCEGATE_TORTURE_SEED", std::random_device{}() % 1000000 + 1);
  seed += 10000 * static_cast<uint64_t>(absl::GetFlag(FLAGS_shard));
  const std::string bug = absl::GetFlag(FLAGS_planted_bug);
  const PlantedBugCase* planted = bug.empty() ? nullptr : FindPlantedBug(bug);
  ScheduleProfile profile;
  if (!bug.empty()) {
    if (planted == nullptr) {
      std::cerr << "unknown --planted_bug '" << bug << "'\n";
      return EXIT_FAILURE;
    }
    profile = planted->profile;
  } else {
    absl::StatusOr<ScheduleProfile> named = ProfileNamed(absl::GetFlag(FLAGS_profile));
    if (!named.ok()) {
      std::cerr << named.status() << "\n";
      return EXIT_FAILURE;
    }
    profile = *named;
  }
  if (!absl::GetFlag(FLAGS_topology).empty()) {
    absl::StatusOr<Topology> topology = TopologyNamed(absl::GetFlag(FLAGS_topology));
    if (!topology.ok()) {
      std::cerr << topology.status() << "\n";
      return EXIT_FAILURE;
    }
    if (planted != nullptr && topology->storage == GatewayStorage::kPostgres &&
        !planted->in_postgres) {
      std::cerr << "planted bug " << bug << " is planted in the SQLite backend only; "
                << "it cannot run with --topology=" << topology->name << "\n";
      return EXIT_FAILURE;
    }
    if (planted != nullptr &&
        planted->profile.topology.replicated() != topology->replicated()) {
      std::cerr << "planted bug " << bug << " runs on its own topology ("
                << planted->profile.topology.name << ") only\n";
      return EXIT_FAILURE;
    }
    if (planted == nullptr && topology->replicated() && !profile.topology.replicated()) {
      // The etcd-cluster topology's faults are in its own profiles.
      const std::string name = absl::GetFlag(FLAGS_profile);
      if (name != "default") {
        std::cerr << "--topology=" << topology->name
                  << " runs the etcd-cluster and etcd-* "
                  << "profiles only, not --profile=" << name << "\n";
        return EXIT_FAILURE;
      }
      profile = *ProfileNamed("etcd-cluster");
    }
    profile.topology = *topology;
  }
  if (profile.sql_workers > 0 && (profile.topology.storage != GatewayStorage::kPostgres ||
                                  profile.topology.replicated())) {
    // SQL workers write the gateways' own rows, so they need those on the
    // PostgreSQL server the run starts; on a networked topology they would
    // need hosts of their own, which it does not have.
    std::cerr << "profile " << profile.name << " has SQL workers: it runs on "
              << "--topology=postgres-two-gateways only, not " << profile.topology.name
              << "\n";
    return EXIT_FAILURE;
  }
  if (absl::GetFlag(FLAGS_seconds) > 0) profile.traffic = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  if (!absl::GetFlag(FLAGS_lockservice_failpoint).empty()) {
    profile.lockservice.failpoints = {absl::GetFlag(FLAGS_lockservice_failpoint)};
  }
  if (!absl::GetFlag(FLAGS_gateway_failpoint).empty()) {
    profile.gateway.failpoints = {absl::GetFlag(FLAGS_gateway_failpoint)};
  }

  RunOptions options;
  options.lockservice_binary = absl::GetFlag(FLAGS_lockservice_bin);
  options.gateway_binary = absl::GetFlag(FLAGS_gateway_bin);
  options.worker_binary = absl::GetFlag(FLAGS_worker_bin);
  options.faketime_library = absl::GetFlag(FLAGS_faketime_library);
  options.keep_run_dir = absl::GetFlag(FLAGS_keep);
  options.reach_timeout = absl::GetFlag(FLAGS_reach_timeout) > absl::ZeroDuration()
                              ? absl::GetFlag(FLAGS_reach_timeout)
                              : profile.topology.reach_timeout;
  options.work_dir = absl::GetFlag(FLAGS_work_dir);
  if (options.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    options.work_dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fencegate-torture-", getpid());
  }
  // A replicated topology runs in a network of this run's own, for all its
  // schedules; this thread (and every thread it starts: the harness's
  // clients) joins its harness host. Namespaces that a crashed earlier run
  // left behind go first (VirtualNetwork::Create).
  std::unique_ptr<testing::VirtualNetwork> network;
  if (profile.topology.replicated()) {
    absl::StatusOr<std::unique_ptr<testing::VirtualNetwork>> created =
        testing::VirtualNetwork::Create(
            NetworkHostNames(profile.topology, profile.workers));
    if (!created.ok()) {
      std::cerr << "cannot make the run's network: " << created.status() << "\n";
      return EXIT_FAILURE;
    }
    network = *std::move(created);
    absl::Status joined = network->JoinFromThisThread(kHarnessHost);
    if (!joined.ok()) {
      std::cerr << "cannot join the run's network: " << joined << "\n";
      return EXIT_FAILURE;
    }
    options.network = network.get();
  }
  std::cout << "fencegate-torture: " << schedules << " schedule(s) from seed " << seed
            << ", profile " << profile.name << ", topology " << profile.topology.name
            << ", runs in " << options.work_dir << std::endl;
  if (planted != nullptr) {
    std::cout << "planted bug " << bug << ": " << planted->what << "; must be caught by "
              << absl::StrJoin(planted->caught_by, " or ") << std::endl;
  }

  RunSummary summary;
  bool caught = false;
  for (int i = 0; i < schedules && !caught; ++i) {
    const Schedule schedule = MakeSchedule(profile, seed + i);
    const absl::Time start = absl::Now();
    RunResult result = RunSchedule(schedule, options);
    const absl::Duration took = absl::Now() - start;
    if (planted != nullptr) {
      for (const std::string& invariant : planted->caught_by) {
        if (result.check.Violates(invariant)) caught = true;
      }
      // A caught bug's run is what was expected: nothing to look into.
      if (caught && !options.keep_run_dir) std::filesystem::remove_all(result.run_dir);
    }
    // RunSchedule removed it if the run passed (without --keep).
    summary.Add(schedule, result, took, std::filesystem::exists(result.run_dir));
  }
  rmdir(options.work_dir.c_str());  // only if no run directory was kept in it
  if (planted != nullptr) {
    std::cout << "planted bug " << bug
              << (caught ? " was caught" : " went unnoticed in every schedule") << std::endl;
    return caught ? EXIT_SUCCESS : EXIT_FAILURE;
  }
  const bool passed = summary.failed_seeds().empty();
  const std::string topology = absl::GetFlag(FLAGS_topology);
  std::cout << summary.Line(topology.empty() ? profile.name
                                             : absl::StrCat(profile.name, " on ", topology),
                            passed)
            << std::endl;
  for (uint64_t failed : summary.failed_seeds()) {
    std::cout << "replay: ./scripts/torture --schedules=1 --seed=" << failed
              << " --profile=" << profile.name
              << (topology.empty() ? "" : " --topology=" + topology) << " --keep" << std::endl;
  }
  return passed ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace
}  // namespace fencegate::torture

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate-torture");
  absl::SetProgramUsageMessage(
      "fencegate-torture: fault-injection torture of fencegate with a history checker "
      "(docs/torture.md).\nUsage: fencegate-torture --schedules=N --seed=S [--profile=P]");
  absl::ParseCommandLine(argc, argv);
  return fencegate::torture::Main();
}
