// fencegate-loadgen: one measured run of one workload against one system,
// printed as one line of JSON on stdout (./scripts/bench runs it many times
// and takes medians). Closed loop, one connection per client thread, exact
// percentiles from every sample. Exit status: 0 ok, 1 some operations
// failed (the first failure is printed on stderr), 2 bad flags or the run
// could not be set up.
//
//   fencegate-loadgen --system=fencegate --target=127.0.0.1:7070
//       --gateway_target=127.0.0.1:7071 --workload=fenced_write
//       --clients=32 --resources=1000 --duration=2s
//   fencegate-loadgen --system=fencegate-stream --target=127.0.0.1:7070
//       --gateway_target=127.0.0.1:7071 --workload=pipelined_write --depth=32
//       --clients=1 --resources=1000
//   fencegate-loadgen --system=sql-fenced --target=127.0.0.1:7070
//       --postgres=postgresql://u@127.0.0.1:5432/db --workload=fenced_write
//   fencegate-loadgen --system=etcd --target=127.0.0.1:2379 --workload=handoff
//       --clients=32 --resources=1
//   fencegate-loadgen --system=redis --target=127.0.0.1:6379 ...
//   fencegate-loadgen --system=grpc-empty --target=... --workload=rpc
//   fencegate-loadgen --shape=loop --system=fencegate-stream --target=...
//       --gateway_target=... --workload=fenced_write --clients=32
//   fencegate-loadgen --shape=loop --system=redis --target=... --workload=lock_cycle
//   fencegate-loadgen --shape=loop --system=grpc-empty --target=... --workload=rpc
//   fencegate-loadgen --workload=fsync --dir=/tmp/x
//   fencegate-loadgen --system=fencegate-stream --gateway_target=127.0.0.1:7071
//       --workload=fill --resources=100000 --clients=16 --value_bytes=64
//   fencegate-loadgen --system=fencegate-stream --target=127.0.0.1:7070
//       --workload=park --run_id=p --resources=1 --waiters=10000 --clients=16
//   fencegate-loadgen --shape=elect --system=fencegate --target=127.0.0.1:7070
//       --gateway_target=127.0.0.1:7071 --run_id=e1 --elect_ttl=2s --duration=60s
//   fencegate-loadgen --shape=elect --system=etcd --target=127.0.0.1:2379
//       --run_id=e1 --elect_ttl=2s --duration=60s
//
// --shape=elect is one candidate of an election (elect.h): it prints a line
// when it campaigns and one after its first fenced write as leader, then
// writes until --duration has passed or it is killed (the election failover
// row: bench/orchestrate/failover.py).
//
// park prints a line {"phase": "sent", ...} once every call is sent, keeps
// the waiters parked until its standard input ends (or SIGTERM), then
// prints its summary line; exit status 1 if any waiter was answered early.
//
// Workloads: workloads.h (--shape=thread, a thread per client) and
// loop_workloads.h (--shape=loop, event-loop clients). Systems: the
// *_driver.h files, and for --shape=loop the *_loop.h files.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/echo_cq_loop.h"
#include "bench/loadgen/echo_driver.h"
#include "bench/loadgen/echo_loop.h"
#include "bench/loadgen/elect.h"
#include "bench/loadgen/etcd_driver.h"
#include "bench/loadgen/fencegate_driver.h"
#include "bench/loadgen/fsync_loop.h"
#include "bench/loadgen/lease_hold.h"
#include "bench/loadgen/library_loop.h"
#include "bench/loadgen/loop_workloads.h"
#include "bench/loadgen/park_waiters.h"
#include "bench/loadgen/sql_driver.h"
#include "bench/loadgen/workloads.h"
#include "common/build_info/build_info.h"
#ifdef FENCEGATE_BENCH_HAVE_HIREDIS
#include "bench/loadgen/redis_driver.h"
#endif
#ifdef FENCEGATE_BENCH_HAVE_LIBEVENT
#include "bench/loadgen/redis_loop.h"
#endif

ABSL_FLAG(std::string, system, "fencegate",
          "fencegate, fencegate-stream (lock calls and gateway writes over the servers' "
          "Session streams), "
          "sql-fenced or sql-plain (a write to a PostgreSQL table, with or without "
          "fencegate_fence; --target is the lock service), etcd, redis or grpc-empty");
ABSL_FLAG(std::string, shape, "thread",
          "how the clients run: thread (a thread per client, blocking calls) or loop "
          "(event-loop clients, one op in flight each, the next started in the last "
          "one's callback: fencegate-stream through its client library's async calls, "
          "redis on hiredis' async API and libevent, grpc-empty as the streaming echo "
          "(gRPC's callback API), grpc-empty-cq the same on its asynchronous API, one "
          "thread on one completion queue; "
          "fenced_write, lock_cycle on many resources, rpc), or elect (one candidate of "
          "the election --run_id: fencegate or etcd; elect.h)");
ABSL_FLAG(std::string, target, "",
          "host:port of the system (fencegate: its lock service)");
ABSL_FLAG(std::string, gateway_target, "", "fencegate only: host:port of its gateway");
ABSL_FLAG(std::string, postgres, "",
          "sql-fenced, sql-plain: the libpq URI of a schema holding the SQL fencing API");
ABSL_FLAG(std::string, workload, "lock_cycle",
          "lock_cycle, fenced_write, pipelined_write, handoff, shared_cycle, rw_mix, "
          "multi_cycle (the lock kinds), rpc, hold (leases left held: "
          "--scale), fill (one key on every resource of the gateway: --scale), park "
          "(waiters kept parked: --scale), lease_hold (--resources Leases of the client "
          "library held for --duration: its renewal threads), or fsync (the disk "
          "ceiling)");
ABSL_FLAG(int, depth, 32,
          "pipelined_write, fill: writes in flight per client; park: calls per stream "
          "message");
ABSL_FLAG(int, waiters, 1000,
          "park: Acquire calls to park (waiter k on resource k % resources)");
ABSL_FLAG(absl::Duration, park_wait, absl::Minutes(20), "park: the waiters' wait");
ABSL_FLAG(absl::Duration, hold_ttl, absl::Minutes(10),
          "hold: the TTL of the leases left held");
ABSL_FLAG(absl::Duration, elect_ttl, absl::Seconds(2),
          "--shape=elect: the TTL of the candidate's term (fencegate) or lease (etcd)");
ABSL_FLAG(absl::Duration, write_every, absl::Milliseconds(5),
          "--shape=elect: the pause between the leader's fenced writes");
ABSL_FLAG(std::string, durability, "",
          "label copied into the output (e.g. fsync, everysec)");
ABSL_FLAG(std::string, system_label, "",
          "the system's name in the output (default: --system), e.g. "
          "fencegate-etcd (lock service on etcd) or fencegate-pg (gateway on "
          "PostgreSQL)");
ABSL_FLAG(int, clients, 1, "concurrent client threads, one connection each");
ABSL_FLAG(int, resources, 1000, "distinct resources the clients spread over (1 = hot)");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(2), "measured time");
ABSL_FLAG(absl::Duration, warmup, absl::Milliseconds(500), "unmeasured time first");
ABSL_FLAG(int, value_bytes, 1024, "bytes per fenced write");
ABSL_FLAG(std::string, run_id, "", "prefix of resource names (default: from the time)");
ABSL_FLAG(absl::Duration, redis_retry, absl::Milliseconds(1),
          "redis only: mean pause before retrying a held lock (jittered +-50%)");
ABSL_FLAG(std::string, dir, "/tmp", "fsync only: directory to sync in");
ABSL_FLAG(std::vector<std::string>, server_pids, {},
          "PIDs of the servers under test, for CPU per op (comma-separated)");

namespace {

using fencegate::bench::Driver;
using fencegate::bench::DriverFactory;

absl::StatusOr<DriverFactory> MakeFactory(const std::string& system,
                                          const std::string& target) {
  const std::string gateway = absl::GetFlag(FLAGS_gateway_target);
  // fill needs the gateway only.
  const bool fill = absl::GetFlag(FLAGS_workload) == "fill";
  if (fill && (system != "fencegate-stream" || gateway.empty())) {
    return absl::InvalidArgumentError(
        "--workload=fill needs --system=fencegate-stream and --gateway_target");
  }
  if (target.empty() && !fill) return absl::InvalidArgumentError("--target is required");
  if (system == "fencegate" || system == "fencegate-stream") {
    const auto transport = system == "fencegate"
                               ? fencegate::bench::Transport::kUnary
                               : fencegate::bench::Transport::kStream;
    return DriverFactory([target, gateway, transport](
                             int index) -> absl::StatusOr<std::unique_ptr<Driver>> {
      return std::make_unique<fencegate::bench::FencegateDriver>(
          target, gateway, absl::StrCat("loadgen-", getpid(), "-", index), transport);
    });
  }
  if (system == "sql-fenced" || system == "sql-plain") {
    const std::string postgres = absl::GetFlag(FLAGS_postgres);
    if (postgres.empty())
      return absl::InvalidArgumentError("--system=" + system + " needs --postgres");
    const auto fencing = system == "sql-fenced" ? fencegate::bench::SqlFencing::kFenced
                                                : fencegate::bench::SqlFencing::kPlain;
    return DriverFactory([target, postgres,
                          fencing](int index) -> absl::StatusOr<std::unique_ptr<Driver>> {
      return std::make_unique<fencegate::bench::SqlDriver>(
          target, postgres, absl::StrCat("loadgen-", getpid(), "-", index), fencing);
    });
  }
  if (system == "etcd") {
    return DriverFactory([target](int) -> absl::StatusOr<std::unique_ptr<Driver>> {
      return std::make_unique<fencegate::bench::EtcdDriver>(target);
    });
  }
  if (system == "redis") {
#ifdef FENCEGATE_BENCH_HAVE_HIREDIS
    absl::Duration retry = absl::GetFlag(FLAGS_redis_retry);
    return DriverFactory(
        [target, retry](int index) -> absl::StatusOr<std::unique_ptr<Driver>> {
          return std::make_unique<fencegate::bench::RedisDriver>(
              target, absl::StrCat("loadgen-", getpid(), "-", index), retry);
        });
#else
    return absl::FailedPreconditionError(
        "built without hiredis: install libhiredis-dev and rebuild");
#endif
  }
  if (system == "grpc-empty" || system == "grpc-empty-cq") {
    return DriverFactory([target](int) -> absl::StatusOr<std::unique_ptr<Driver>> {
      return std::make_unique<fencegate::bench::EchoDriver>(target);
    });
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--system: unknown '", system,
      "'; one of fencegate, fencegate-stream, sql-fenced, sql-plain, etcd, redis, "
      "grpc-empty, grpc-empty-cq"));
}

// --shape=loop's driver of `system`.
absl::StatusOr<std::unique_ptr<fencegate::bench::LoopDriver>> MakeLoopDriver(
    const std::string& system, const std::string& target) {
  if (target.empty()) return absl::InvalidArgumentError("--target is required");
  const std::string holder = absl::StrCat("loadgen-", getpid());
  if (system == "fencegate-stream") {
    return std::make_unique<fencegate::bench::LibraryLoop>(
        target, absl::GetFlag(FLAGS_gateway_target), holder);
  }
  if (system == "redis") {
#ifdef FENCEGATE_BENCH_HAVE_LIBEVENT
    return std::make_unique<fencegate::bench::RedisLoop>(target, holder,
                                                         absl::GetFlag(FLAGS_redis_retry));
#else
    return absl::FailedPreconditionError(
        "built without hiredis or libevent: install libhiredis-dev and libevent-dev, "
        "and rebuild");
#endif
  }
  if (system == "grpc-empty") return std::make_unique<fencegate::bench::EchoLoop>(target);
  if (system == "grpc-empty-cq")
    return std::make_unique<fencegate::bench::EchoCqLoop>(target);
  return absl::InvalidArgumentError(
      absl::StrCat("--shape=loop: --system must be fencegate-stream, redis, grpc-empty "
                   "or grpc-empty-cq, "
                   "not '",
                   system, "'"));
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "fencegate-loadgen: %s\n", status.ToString().c_str());
  return 2;
}

// --workload=park: parks the waiters, says so, keeps them until stdin ends.
int RunPark() {
  fencegate::bench::BlockStopSignals();  // before any thread starts
  if (absl::GetFlag(FLAGS_system) != "fencegate-stream") {
    return Fail(
        absl::InvalidArgumentError("--workload=park needs --system=fencegate-stream"));
  }
  fencegate::bench::ParkConfig config;
  config.target = absl::GetFlag(FLAGS_target);
  config.run_id = absl::GetFlag(FLAGS_run_id);
  config.resources = absl::GetFlag(FLAGS_resources);
  config.waiters = absl::GetFlag(FLAGS_waiters);
  config.streams = absl::GetFlag(FLAGS_clients);
  config.batch = absl::GetFlag(FLAGS_depth);
  config.wait = absl::GetFlag(FLAGS_park_wait);
  if (config.run_id.empty()) {
    return Fail(absl::InvalidArgumentError(
        "--workload=park needs the --run_id of the hold run that holds its resources"));
  }
  const absl::Time start = absl::Now();
  auto parked = fencegate::bench::ParkedWaiters::Park(config);
  if (!parked.ok()) return Fail(parked.status());
  std::printf(
      "{\"phase\": \"sent\", \"waiters\": %d, \"resources\": %d, "
      "\"streams\": %d, \"send_s\": %.3f}\n",
      config.waiters, config.resources, config.streams,
      absl::ToDoubleSeconds(absl::Now() - start));
  std::fflush(stdout);
  fencegate::bench::WaitForStdinEndOrStopSignal();
  const int64_t answered = (*parked)->answered();
  const std::string first = (*parked)->first_answer();
  (*parked)->Stop();
  std::printf("{\"phase\": \"stopped\", \"waiters\": %d, \"answered_early\": %lld}\n",
              config.waiters, static_cast<long long>(answered));
  std::fflush(stdout);
  if (answered > 0) {
    std::fprintf(stderr,
                 "fencegate-loadgen: %lld waiters did not stay parked; first: %s\n",
                 static_cast<long long>(answered), first.c_str());
    return 1;
  }
  return 0;
}

// --shape=elect: one candidate, until --duration or kill.
int RunElect() {
  fencegate::bench::CandidateConfig config;
  config.system = absl::GetFlag(FLAGS_system);
  config.target = absl::GetFlag(FLAGS_target);
  config.gateway_target = absl::GetFlag(FLAGS_gateway_target);
  config.election = absl::GetFlag(FLAGS_run_id);
  config.candidate = absl::StrCat("candidate-", getpid());
  config.ttl = absl::GetFlag(FLAGS_elect_ttl);
  config.write_every = absl::GetFlag(FLAGS_write_every);
  config.duration = absl::GetFlag(FLAGS_duration);
  absl::Status status = fencegate::bench::RunCandidate(config);
  if (absl::IsInvalidArgument(status)) return Fail(status);
  if (!status.ok()) {
    std::fprintf(stderr, "fencegate-loadgen: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate-loadgen");
  absl::ParseCommandLine(argc, argv);
  // As the servers (common/server_main/server_main.cc) and as a client
  // program should on Debian, whose Abseil otherwise checks every mutex
  // acquisition for lock-order cycles under one global lock
  // (include/fencegate/client/lock_client.h, "Performance").
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const std::string workload = absl::GetFlag(FLAGS_workload);
  if (workload == "park") return RunPark();
  if (absl::GetFlag(FLAGS_shape) == "elect") return RunElect();
  fencegate::bench::RunLabels labels;
  labels.workload = workload;
  labels.durability = absl::GetFlag(FLAGS_durability);
  labels.duration_s = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_duration));

  absl::StatusOr<fencegate::bench::RunSummary> summary;
  std::string first_error;
  if (workload == "fsync") {
    labels.system = "fsync";
    labels.clients = 1;
    summary = fencegate::bench::RunFsyncLoop(absl::GetFlag(FLAGS_dir),
                                             absl::GetFlag(FLAGS_warmup),
                                             absl::GetFlag(FLAGS_duration));
  } else {
    fencegate::bench::RunConfig config;
    auto parsed = fencegate::bench::ParseWorkload(workload);
    if (!parsed.ok()) return Fail(parsed.status());
    config.workload = *parsed;
    config.clients = absl::GetFlag(FLAGS_clients);
    config.resources = absl::GetFlag(FLAGS_resources);
    config.warmup = absl::GetFlag(FLAGS_warmup);
    config.duration = absl::GetFlag(FLAGS_duration);
    config.value_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_value_bytes));
    config.depth = absl::GetFlag(FLAGS_depth);
    if (config.workload == fencegate::bench::Workload::kHold) {
      config.hold_ttl = absl::GetFlag(FLAGS_hold_ttl);
    }
    config.run_id = absl::GetFlag(FLAGS_run_id);
    if (config.run_id.empty()) {
      config.run_id = absl::StrCat("b", absl::ToUnixMicros(absl::Now()));
    }
    for (const std::string& pid : absl::GetFlag(FLAGS_server_pids)) {
      int value = 0;
      if (!absl::SimpleAtoi(pid, &value) || value <= 0) {
        return Fail(absl::InvalidArgumentError(
            absl::StrCat("--server_pids: '", pid, "' is not a PID")));
      }
      config.server_pids.push_back(value);
    }
    const std::string system = absl::GetFlag(FLAGS_system);
    labels.system = absl::GetFlag(FLAGS_system_label);
    if (labels.system.empty()) labels.system = system;
    labels.clients = config.clients;
    labels.resources = config.resources;
    auto factory = MakeFactory(system, absl::GetFlag(FLAGS_target));
    if (!factory.ok()) return Fail(factory.status());
    const std::string shape = absl::GetFlag(FLAGS_shape);
    if (workload == "lease_hold") {
      if (system != "fencegate-stream") {
        return Fail(absl::InvalidArgumentError(
            "--workload=lease_hold needs --system=fencegate-stream"));
      }
      absl::StatusOr<std::string> line =
          fencegate::bench::RunLeaseHold(config, absl::GetFlag(FLAGS_target));
      if (!line.ok()) return Fail(line.status());
      std::printf("%s\n", line->c_str());
      return 0;
    }
    if (shape == "loop") {
      auto loop = MakeLoopDriver(system, absl::GetFlag(FLAGS_target));
      if (!loop.ok()) return Fail(loop.status());
      summary = fencegate::bench::RunLoopWorkload(config, *factory, **loop, &first_error);
    } else if (shape == "thread") {
      summary = fencegate::bench::RunWorkload(config, *factory, &first_error);
    } else {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("--shape: '", shape, "'; one of thread, loop")));
    }
  }
  if (!summary.ok()) return Fail(summary.status());
  std::printf("%s\n", fencegate::bench::ToJsonLine(labels, *summary).c_str());
  std::fflush(stdout);
  if (summary->errors > 0) {
    std::fprintf(stderr, "fencegate-loadgen: %lld operations failed; first: %s\n",
                 static_cast<long long>(summary->errors), first_error.c_str());
    return 1;
  }
  return 0;
}
