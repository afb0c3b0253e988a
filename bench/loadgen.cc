// fencegate-loadgen: closed-loop load against a running lock service, one
// gRPC connection per client thread. Prints one JSON object per run with
// throughput and latency percentiles taken from every sample (sorted, not
// averaged).
//
//   fencegate-loadgen --target=127.0.0.1:7070 --workload=lock_cycle \
//       --clients=32 --resources=1000 --duration=10s
//
// Workloads: lock_cycle = try-lock Acquire (TTL 10 s) then owner-checked
// Release; one op = both calls. On a hot resource (--resources=1) clients
// use wait_ms so they queue instead of spinning. rpc = one empty call to
// fencegate-echo-server: the ceiling the others are compared with.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "echo.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, target, "127.0.0.1:7070", "lock service address");
ABSL_FLAG(std::string, workload, "lock_cycle", "lock_cycle or rpc");
ABSL_FLAG(int, clients, 32, "concurrent client threads, one connection each");
ABSL_FLAG(int, resources, 1000, "distinct resources the clients spread over");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "measured time per run");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(1), "unmeasured time first");

namespace {

namespace v1 = ::fencegate::v1;

struct ClientStats {
  std::vector<int64_t> latencies_us;
  int64_t errors = 0;
};

bool LockCycle(v1::LockService::Stub& stub, const std::string& resource,
               const std::string& holder, bool hot) {
  grpc::ClientContext acquire_ctx;
  acquire_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::AcquireRequest acquire;
  acquire.set_resource(resource);
  acquire.set_holder(holder);
  acquire.set_ttl_ms(10000);
  acquire.set_wait_ms(hot ? 30000 : 0);
  v1::AcquireResponse lease;
  if (!stub.Acquire(&acquire_ctx, acquire, &lease).ok()) return false;
  if (!lease.acquired()) return true;  // contended try-lock: still a full round trip
  grpc::ClientContext release_ctx;
  v1::ReleaseRequest release;
  release.set_resource(resource);
  release.set_token(lease.token());
  v1::ReleaseResponse released;
  return stub.Release(&release_ctx, release, &released).ok();
}

bool EmptyCall(fencegate::bench::Echo::Stub& stub) {
  grpc::ClientContext ctx;
  fencegate::bench::EchoMessage request, response;
  return stub.Call(&ctx, request, &response).ok();
}

int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(p * (sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string target = absl::GetFlag(FLAGS_target);
  const int clients = absl::GetFlag(FLAGS_clients);
  const int resources = absl::GetFlag(FLAGS_resources);
  const bool hot = resources == 1;
  const absl::Time start = absl::Now() + absl::GetFlag(FLAGS_warmup);
  const absl::Time end = start + absl::GetFlag(FLAGS_duration);

  std::vector<ClientStats> stats(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // own connection
      auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
      auto stub = v1::LockService::NewStub(channel);
      auto echo = fencegate::bench::Echo::NewStub(channel);
      const bool rpc = absl::GetFlag(FLAGS_workload) == "rpc";
      const std::string holder = absl::StrCat("loadgen-", c);
      for (uint64_t i = c;; i += clients) {
        const absl::Time before = absl::Now();
        if (before >= end) break;
        bool ok = rpc ? EmptyCall(*echo)
                      : LockCycle(*stub, absl::StrCat("res-", i % resources), holder, hot);
        if (before < start) continue;
        if (!ok) ++stats[c].errors;
        stats[c].latencies_us.push_back(absl::ToInt64Microseconds(absl::Now() - before));
      }
    });
  }
  for (auto& t : threads) t.join();

  std::vector<int64_t> all;
  int64_t errors = 0;
  for (auto& s : stats) {
    all.insert(all.end(), s.latencies_us.begin(), s.latencies_us.end());
    errors += s.errors;
  }
  std::sort(all.begin(), all.end());
  const double seconds = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_duration));
  std::printf("%s\n",
              absl::StrFormat("{\"system\": \"%s\", \"workload\": \"%s\", "
                              "\"clients\": %d, \"resources\": %d, \"ops\": %d, "
                              "\"errors\": %d, \"ops_per_s\": %.0f, \"p50_us\": %d, "
                              "\"p99_us\": %d}",
                              absl::GetFlag(FLAGS_workload) == "rpc" ? "grpc-empty" : "fencegate",
                              absl::GetFlag(FLAGS_workload), clients, resources,
                              all.size(), errors, all.size() / seconds,
                              Percentile(all, 0.50), Percentile(all, 0.99))
                  .c_str());
  return errors == 0 ? 0 : 1;
}
