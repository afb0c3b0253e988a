#include "tests/cluster/lockservice_cluster.h"

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/grpc/channel_credentials.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "tests/testing/health_check.h"

namespace fencegate::testing {
namespace {

constexpr char kBinary[] = FENCEGATE_LOCKSERVICE_BIN;
constexpr char kPrefix[] = "/fencegate/lockservice/";

}  // namespace

absl::StatusOr<std::unique_ptr<LockServiceCluster>> LockServiceCluster::Start(
    const std::string& dir, LockServiceClusterOptions options) {
  std::unique_ptr<LockServiceCluster> cluster(new LockServiceCluster());
  cluster->dir_ = dir;
  cluster->options_ = options;
  EtcdClusterOptions etcd_options;
  etcd_options.members = options.etcd_members;
  etcd_options.tls = options.etcd_tls;
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start(dir, etcd_options);
  if (!etcd.ok()) return etcd.status();
  cluster->etcd_ = *std::move(etcd);
  cluster->instances_.resize(options.instances);
  cluster->ports_.resize(options.instances);
  for (int i = 0; i < options.instances; ++i) {
    absl::Status status = cluster->StartInstance(i);
    if (!status.ok()) return status;
  }
  return cluster;
}

absl::Status LockServiceCluster::StartInstance(int i) {
  std::vector<std::string> args = {
      "--store=" + etcd_->url(),
      absl::StrCat("--etcd_session_ttl=", absl::FormatDuration(options_.session_ttl)),
      "--shutdown_grace=2s",
  };
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  absl::StatusOr<std::unique_ptr<ServerProcess>> process =
      ServerProcess::Start(kBinary, args, dir_, absl::StrCat("lockservice-", i));
  if (!process.ok()) return process.status();
  instances_[i] = *std::move(process);
  ports_[i] = instances_[i]->port();
  return absl::OkStatus();
}

std::string LockServiceCluster::Target(std::vector<int> order) const {
  if (order.empty()) {
    for (int i = 0; i < instances(); ++i) order.push_back(i);
  }
  std::vector<std::string> addresses;
  for (int i : order) addresses.push_back(absl::StrCat("127.0.0.1:", ports_[i]));
  return absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
}

absl::StatusOr<int> LockServiceCluster::WaitLeader(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (absl::Now() < give_up) {
    etcdserverpb::RangeRequest range;
    range.set_key(absl::StrCat(kPrefix, "leader"));
    auto answer = etcd_->client().Range(range, absl::Now() + absl::Seconds(2));
    if (answer.ok() && !answer->kvs().empty()) {
      const std::string& address = answer->kvs(0).value();
      for (int i = 0; i < instances(); ++i) {
        if (running(i) && address == absl::StrCat("127.0.0.1:", ports_[i]) &&
            WaitServing(i, absl::Seconds(2)).ok()) {
          return i;
        }
      }
    }
    absl::SleepFor(absl::Milliseconds(50));  // poll interval, under a deadline
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "no lock-service instance led within ", absl::FormatDuration(timeout), "\n",
      LogTails()));
}

absl::Status LockServiceCluster::WaitServing(int i, absl::Duration timeout) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(options_.client_tls);
  if (!credentials.ok()) return credentials.status();
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ports_[i]), *credentials);
  const absl::Time give_up = absl::Now() + timeout;
  while (absl::Now() < give_up) {
    absl::StatusOr<Serving> serving = HealthStatus(channel, absl::Seconds(2));
    if (serving.ok() && *serving == Serving::kServing) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(50));  // poll interval, under a deadline
  }
  return absl::DeadlineExceededError(
      absl::StrCat("lock-service instance ", i, " not SERVING within ",
                   absl::FormatDuration(timeout)));
}

void LockServiceCluster::Kill(int i) {
  instances_[i]->Kill();
  instances_[i].reset();
}

absl::Status LockServiceCluster::Pause(int i) { return instances_[i]->Pause(); }
void LockServiceCluster::Resume(int i) { instances_[i]->Resume(); }

absl::Status LockServiceCluster::Restart(int i) { return StartInstance(i); }

std::string LockServiceCluster::LogTails() {
  std::string logs;
  for (int i = 0; i < instances(); ++i) {
    if (!running(i)) continue;
    absl::StrAppend(&logs, "--- lockservice-", i, " (", ports_[i], "):\n",
                    instances_[i]->LogTail(2500), "\n");
  }
  return logs;
}

}  // namespace fencegate::testing
