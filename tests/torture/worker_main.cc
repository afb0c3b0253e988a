// fencegate-torture-worker: one lock holder of the torture suite, as a real
// process so that the harness can freeze it with SIGSTOP like a GC pause.
// It runs Worker (worker.h) until the harness sets `quit` in its control
// page, records every call in its history file, and exits 0.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "common/base/log.h"
#include "common/build_info/build_info.h"
#include "tests/torture/worker.h"

ABSL_FLAG(std::string, name, "w", "this worker's name: prefixes its holders and log ids");
ABSL_FLAG(std::string, lockservice, "", "lock service address, host:port");
ABSL_FLAG(std::string, gateway, "", "gateway address, host:port");
ABSL_FLAG(std::string, postgres, "",
          "a SQL worker: do the fenced reads and writes in transactions of its own, "
          "fenced with fencegate_fence, on this PostgreSQL database (a libpq URI of the "
          "gateways' database and schema) instead of through --gateway");
ABSL_FLAG(std::string, planted_bug, "",
          "a SQL worker's planted bug: sql_worker_skips_fence (its writes skip "
          "fencegate_fence)");
ABSL_FLAG(std::vector<std::string>, resources, {}, "the hot resources, comma-separated");
ABSL_FLAG(uint64_t, seed, 1, "seed of this worker's random choices");
ABSL_FLAG(absl::Duration, min_ttl, absl::Seconds(1), "shortest lease TTL asked for");
ABSL_FLAG(absl::Duration, max_ttl, absl::Seconds(3), "longest lease TTL asked for");
ABSL_FLAG(absl::Duration, max_wait, absl::Milliseconds(500),
          "longest wait in an Acquire queue (well below --min_ttl: a Lease counts its "
          "validity from when the Acquire was sent)");
ABSL_FLAG(absl::Duration, max_think, absl::Milliseconds(50),
          "longest pause between the fenced read and the write");
ABSL_FLAG(absl::Duration, gateway_timeout, absl::Seconds(15),
          "deadline of each gateway call; past it the call's outcome is unknown");
ABSL_FLAG(bool, streams, false,
          "lock-service and gateway calls on the Session streams, not one unary call each");
ABSL_FLAG(double, shared_rounds, 0,
          "share of rounds that read with a shared lease (twice, around a pause)");
ABSL_FLAG(double, permit_rounds, 0,
          "share of rounds that take one of --semaphore's permits");
ABSL_FLAG(
    double, multi_rounds, 0,
    "share of rounds that take two hot resources in one Acquire and increment both");
ABSL_FLAG(std::string, semaphore, "semaphore", "the permit rounds' semaphore");
ABSL_FLAG(uint32_t, permits, 2, "the semaphore's size");
ABSL_FLAG(double, elect_rounds, 0,
          "share of rounds that campaign for --election, proclaim and increment its "
          "counter with the term; with any, the worker also observes the election");
ABSL_FLAG(std::string, election, "election", "the election rounds' election");
ABSL_FLAG(std::string, history, "", "history file to append to");
ABSL_FLAG(std::string, control, "", "the control page the harness created");

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate-torture-worker");
  absl::SetProgramUsageMessage(
      "fencegate-torture-worker: a lock holder of the torture suite (run by "
      "fencegate-torture).");
  absl::ParseCommandLine(argc, argv);
  fencegate::torture::WorkerOptions options;
  options.name = absl::GetFlag(FLAGS_name);
  options.lockservice = absl::GetFlag(FLAGS_lockservice);
  options.gateway = absl::GetFlag(FLAGS_gateway);
  options.postgres = absl::GetFlag(FLAGS_postgres);
  options.planted_bug = absl::GetFlag(FLAGS_planted_bug);
  options.resources = absl::GetFlag(FLAGS_resources);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.min_ttl = absl::GetFlag(FLAGS_min_ttl);
  options.max_ttl = absl::GetFlag(FLAGS_max_ttl);
  options.max_wait = absl::GetFlag(FLAGS_max_wait);
  options.max_think = absl::GetFlag(FLAGS_max_think);
  options.gateway_timeout = absl::GetFlag(FLAGS_gateway_timeout);
  options.streams = absl::GetFlag(FLAGS_streams);
  options.shared_rounds = absl::GetFlag(FLAGS_shared_rounds);
  options.permit_rounds = absl::GetFlag(FLAGS_permit_rounds);
  options.multi_rounds = absl::GetFlag(FLAGS_multi_rounds);
  options.semaphore = absl::GetFlag(FLAGS_semaphore);
  options.permits = absl::GetFlag(FLAGS_permits);
  options.elect_rounds = absl::GetFlag(FLAGS_elect_rounds);
  options.election = absl::GetFlag(FLAGS_election);
  if (options.lockservice.empty() ||
      (options.gateway.empty() && options.postgres.empty()) ||
      options.resources.empty() || absl::GetFlag(FLAGS_history).empty() ||
      absl::GetFlag(FLAGS_control).empty()) {
    fencegate::LogError(
        "--lockservice, --gateway or --postgres, --resources, --history and --control "
        "are required");
    return EXIT_FAILURE;
  }
  if (!options.planted_bug.empty() &&
      (options.postgres.empty() ||
       options.planted_bug != fencegate::torture::kSqlSkipsFenceBug)) {
    fencegate::LogError("--planted_bug=%s: only a SQL worker (--postgres) has one: %s",
                        options.planted_bug, fencegate::torture::kSqlSkipsFenceBug);
    return EXIT_FAILURE;
  }
  if (options.min_ttl <= absl::ZeroDuration() || options.min_ttl > options.max_ttl ||
      options.max_wait >= options.min_ttl) {
    fencegate::LogError("--min_ttl must be > 0, <= --max_ttl and > --max_wait");
    return EXIT_FAILURE;
  }
  const double other_rounds = options.shared_rounds + options.permit_rounds +
                              options.multi_rounds + options.elect_rounds;
  if (options.shared_rounds < 0 || options.permit_rounds < 0 ||
      options.multi_rounds < 0 || options.elect_rounds < 0 || other_rounds > 1 ||
      options.permits == 0 || (!options.postgres.empty() && other_rounds > 0)) {
    fencegate::LogError(
        "--shared_rounds, --permit_rounds, --multi_rounds and --elect_rounds must be "
        ">= 0, sum to "
        "at most 1, and be 0 for a SQL worker; --permits must be >= 1");
    return EXIT_FAILURE;
  }
  auto history = fencegate::torture::HistoryWriter::Open(absl::GetFlag(FLAGS_history),
                                                         options.name);
  auto control =
      fencegate::torture::SharedWorkerControl::Attach(absl::GetFlag(FLAGS_control));
  if (!history.ok() || !control.ok()) {
    fencegate::LogError("%s %s", history.status().ToString(), control.status().ToString());
    return EXIT_FAILURE;
  }
  fencegate::LogInfo(
      "worker %s: lockservice=%s %s resources=%d seed=%d ttl=[%s, %s] "
      "rounds: shared %.2f permit %.2f (of %d) multi %.2f elect %.2f%s",
      options.name, options.lockservice,
      options.postgres.empty() ? "gateway=" + options.gateway
                               : std::string("through SQL on PostgreSQL"),
      static_cast<int>(options.resources.size()), options.seed,
      absl::FormatDuration(options.min_ttl), absl::FormatDuration(options.max_ttl),
      options.shared_rounds, options.permit_rounds, options.permits, options.multi_rounds,
      options.elect_rounds,
      options.planted_bug.empty() ? "" : " planted bug " + options.planted_bug);
  fencegate::torture::Worker worker(options, *std::move(history), *std::move(control));
  worker.Run();
  return EXIT_SUCCESS;
}
