// A lock-service instance whose wall clock steps back reconnects to etcd.
//
// gRPC 1.51 (Debian 12) sleeps on its timer thread until an absolute
// CLOCK_REALTIME deadline; when the wall clock steps back during that
// sleep, every gRPC timer behind it (a subchannel's reconnection among
// them) fires as much later as the step. Found by the torture suite
// (docs/torture-results.md): an instance whose clock jumped 19 h ahead for 2 s and
// back could not reach etcd again for the rest of the run. The instance
// now replaces a channel that stopped reconnecting
// (common/server/stuck_channel.h).
//
// Real process under libfaketime (CLOCK_REALTIME moved through a timestamp
// file, CLOCK_MONOTONIC untouched, as in the torture suite), real etcd.
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_cluster.h"
#include "tests/testing/health_check.h"
#include "harness/log_file.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

constexpr char kFaketime[] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// Polls the instance's health until it is `want`, up to `timeout`.
bool AwaitHealth(const std::shared_ptr<grpc::Channel>& channel, Serving want,
                 absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (absl::Now() < give_up) {
    absl::StatusOr<Serving> serving = HealthStatus(channel, absl::Seconds(2));
    if (serving.ok() && *serving == want) return true;
    absl::SleepFor(absl::Milliseconds(50));  // poll interval, under a deadline
  }
  return false;
}

TEST(ClockStepTest, InstanceReconnectsToEtcdAfterItsWallClockStepsBack) {
  ASSERT_EQ(access(kFaketime, R_OK), 0)
      << "libfaketime is missing: ./scripts/install-deps";
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start(dir.path()));
  const std::string clock_file = dir.File("faketime");
  ASSERT_TRUE(WriteFileAtomically(clock_file, "+0\n"));
  ServerProcessOptions options;
  options.process.argv = {FENCEGATE_LOCKSERVICE_BIN, "--store=" + etcd->url(),
                          "--etcd_session_ttl=2s", "--shutdown_grace=2s"};
  options.process.env = {absl::StrCat("LD_PRELOAD=", kFaketime),
                         "FAKETIME_TIMESTAMP_FILE=" + clock_file, "FAKETIME_NO_CACHE=1",
                         "FAKETIME_DONT_FAKE_MONOTONIC=1"};
  options.dir = dir.path();
  options.name = "lockservice";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerProcess> instance,
                       ServerProcess::Start(std::move(options)));
  auto channel =
      grpc::CreateChannel(instance->address(), grpc::InsecureChannelCredentials());
  ASSERT_TRUE(AwaitHealth(channel, Serving::kServing, absl::Seconds(60)))
      << instance->LogTail();

  // The wall clock 19 hours ahead, then back: a step back of 19 hours while
  // gRPC's timer thread slept. How long it stays ahead is the fault, not a
  // wait for something.
  ASSERT_TRUE(WriteFileAtomically(clock_file, "+68400\n"));
  absl::SleepFor(absl::Seconds(2));
  ASSERT_TRUE(WriteFileAtomically(clock_file, "+0\n"));

  // etcd goes away (its connection breaks) and comes back.
  ASSERT_THAT(etcd->Kill(0), IsOk());
  ASSERT_TRUE(AwaitHealth(channel, Serving::kNotServing, absl::Seconds(60)))
      << "the instance did not notice that etcd was gone\n"
      << instance->LogTail();
  ASSERT_THAT(etcd->Restart(0), IsOk());

  // It leads again: its channels to etcd reconnected.
  EXPECT_TRUE(AwaitHealth(channel, Serving::kServing, absl::Seconds(60)))
      << "the instance did not reconnect to etcd after its wall clock stepped back\n"
      << instance->LogTail();
  EXPECT_THAT(instance->Terminate(), IsOk());
}

}  // namespace
}  // namespace fencegate::testing
