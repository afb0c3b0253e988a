#include "tests/torture/schedule_runner.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "tests/torture/cluster.h"
#include "tests/torture/fault_injector.h"
#include "tests/torture/fence_feed_wait.h"
#include "tests/torture/final_state_reader.h"
#include "tests/torture/history_log.h"

namespace fencegate::torture {
namespace {

// How long the gateways have to catch up with the fence feed after the
// run: a reconnection (at most 5 s of backoff) and a catch-up.
constexpr absl::Duration kFenceFeedTimeout = absl::Seconds(60);

std::vector<std::string> Resources(int count) {
  std::vector<std::string> resources;
  for (int i = 0; i < count; ++i) resources.push_back(ResourceName(i));
  return resources;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// The run's phases, timed, in <run dir>/run.log.
class PhaseLog {
 public:
  explicit PhaseLog(const std::string& path) : out_(path, std::ios::app) {}
  void operator()(const std::string& phase) {
    out_ << absl::StrFormat("[%+.3fs] %s", absl::ToDoubleSeconds(absl::Now() - start_), phase)
         << std::endl;
  }

 private:
  std::ofstream out_;
  const absl::Time start_ = absl::Now();
};

}  // namespace

RunResult RunSchedule(const Schedule& schedule, const RunOptions& options) {
  const ScheduleProfile& profile = schedule.profile;
  RunResult result;
  result.run_dir = absl::StrCat(options.work_dir, "/schedule-", schedule.seed);
  std::filesystem::remove_all(result.run_dir);
  std::filesystem::create_directories(result.run_dir);
  if (access(options.faketime_library.c_str(), R_OK) != 0) {
    result.errors.push_back(absl::StrCat(
        "libfaketime is missing at ", options.faketime_library,
        ": install Debian's libfaketime (./scripts/install-deps does)"));
    return result;
  }
  std::string plan;
  for (const Fault& fault : schedule.faults) {
    absl::StrAppend(&plan, DescribeFault(schedule, fault), "\n");
  }
  WriteFile(result.run_dir + "/schedule.txt", plan);

  PhaseLog phase(result.run_dir + "/run.log");
  const Topology& topology = profile.topology;
  Cluster cluster(
      schedule,
      ClusterOptions{options.lockservice_binary, options.gateway_binary,
                     options.faketime_library, result.run_dir, options.network});
  absl::Status started = cluster.Start();
  if (!started.ok()) {
    result.errors.push_back(started.ToString());
    return result;
  }
  phase("servers started");
  const std::vector<std::string> resources = Resources(profile.resources);
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  std::vector<WorkerProcess*> worker_pointers;
  // The gateway workers, then the SQL workers (on the gateways' database).
  for (int i = 0; i < profile.workers + profile.sql_workers; ++i) {
    WorkerProcessOptions w;
    w.binary = options.worker_binary;
    w.name = WorkerName(profile, i);
    if (i >= profile.workers) {
      w.postgres = cluster.postgres_uri();
      if (absl::StartsWith(profile.planted_bug, "sql_"))
        w.planted_bug = profile.planted_bug;
    }
    w.run_dir = result.run_dir;
    // Spread over the lock service's instances and the gateways.
    w.lockservice = cluster.lockservice_target(i % topology.lockservices);
    w.gateway = cluster.gateway(i % topology.gateways).address();
    if (topology.replicated()) {
      w.network_namespace = options.network->host(WorkerHost(i)).netns;
    }
    w.resources = resources;
    w.seed = schedule.seed * 1000 + static_cast<uint64_t>(i);
    w.min_ttl = profile.min_ttl;
    w.max_ttl = profile.max_ttl;
    w.max_think = profile.max_think;
    w.gateway_timeout = topology.gateway_timeout;
    // Half the workers, as many on each gateway, call over the Session
    // streams; the others make one unary call each.
    w.streams = (i / topology.gateways) % 2 == 1;
    if (i < profile.workers) {  // the kinds of lock: gateway workers only
      w.shared_rounds = profile.shared_rounds;
      w.permit_rounds = profile.permit_rounds;
      w.multi_rounds = profile.multi_rounds;
      w.semaphore = SemaphoreName();
      w.permits = profile.permits;
      w.elect_rounds = profile.elect_rounds;
      w.election = ElectionName();
    }
    absl::StatusOr<std::unique_ptr<WorkerProcess>> worker = WorkerProcess::Start(w);
    if (!worker.ok()) {
      result.errors.push_back(worker.status().ToString());
      return result;
    }
    worker_pointers.push_back(worker->get());
    workers.push_back(*std::move(worker));
  }

  // Traffic, with the faults.
  phase("started: traffic and faults");
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<HistoryWriter>> harness_history =
      HistoryWriter::Open(result.run_dir + "/worker-harness.history", "harness");
  if (!harness_history.ok()) {
    result.errors.push_back(harness_history.status().ToString());
    return result;
  }
  FaultInjector injector(schedule, &cluster, worker_pointers,
                         result.run_dir + "/faults.log", harness_history->get(),
                         options.reach_timeout);
  injector.Run(start);
  phase("faults done");
  absl::SleepFor(start + profile.traffic - absl::Now());
  result.faults = injector.tally();
  phase("traffic done");

  // Heal, and let the workers finish.
  cluster.Heal(&result.errors);
  for (auto& worker : workers) worker->control().quit.store(1);
  for (auto& worker : workers) {
    // Long enough for a call in flight to end by its own deadline.
    absl::Status quit = worker->Quit(profile.topology.gateway_timeout + absl::Seconds(45));
    if (!quit.ok()) result.errors.push_back(quit.ToString());
  }

  phase("workers quit");
  // Grant-time fencing: the gateways have time to catch up with every
  // position the lock service committed, and their fences are read (the
  // checker's grant-time-fence-reaches-gateways) before the last crash,
  // after which they replay the whole feed anyway. One gateway reads the
  // fences of all: they share them.
  std::map<std::string, FeedFence> feed_fences;
  if (schedule.secure) {
    absl::StatusOr<std::map<std::string, FeedFence>> fences = AwaitFenceFeed(
        cluster.lockservice_target(), cluster.gateway(0).address(), kFenceFeedTimeout);
    if (fences.ok()) {
      feed_fences = *std::move(fences);
    } else {
      result.errors.push_back(
          absl::StrCat("reading the fence feed: ", fences.status().ToString()));
    }
    phase("fences read after the fence feed");
  }
  // One last crash of every server: what was acknowledged must survive it.
  // The gateways share their data, so one of them reads it all.
  cluster.KillAll();
  cluster.Heal(&result.errors);
  std::vector<std::string> final_resources = resources;
  if (topology.replicated()) final_resources.push_back(FenceProbeResource());
  if (profile.elect_rounds > 0) final_resources.push_back(ElectionName());
  absl::StatusOr<std::map<std::string, FinalState>> final_state =
      ReadFinalState(cluster.gateway(0).address(), final_resources);
  phase(final_state.ok() ? "final state read" : "final reads failed");
  cluster.Stop(&result.errors);
  if (!final_state.ok()) {
    result.errors.push_back(final_state.status().ToString());
    return result;
  }
  WriteFile(result.run_dir + "/final.tsv",
            FormatFinalState(*final_state, schedule.secure, feed_fences));

  absl::StatusOr<History> history = LoadRunDirectory(result.run_dir);
  if (!history.ok()) {
    result.errors.push_back(history.status().ToString());
    return result;
  }
  result.check = CheckHistory(*history);
  phase(absl::StrCat("checked: ", result.check.violations.size(), " violations"));
  if (result.passed() && !options.keep_run_dir) std::filesystem::remove_all(result.run_dir);
  return result;
}

}  // namespace fencegate::torture
