#include "tests/testing/etcd_cluster.h"

#include <unistd.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/grpc/channel_credentials.h"
#include "harness/free_port.h"
#include "harness/log_file.h"

namespace fencegate::testing {
namespace {

// What etcd 3.4 logs once it serves clients.
constexpr char kServing[] = "serving client traffic";

std::string MemberName(int i) { return absl::StrCat("etcd-m", i); }

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(
    const std::string& dir, EtcdClusterOptions options) {
  if (options.members != 1 && options.members != 3) {
    return absl::InvalidArgumentError("an EtcdCluster has 1 or 3 members");
  }
  if (!options.hosts.empty() &&
      static_cast<int>(options.hosts.size()) != options.members) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdClusterOptions::hosts: ", options.hosts.size(), " hosts for ",
                     options.members, " members; give one per member or none"));
  }
  if (access(kEtcdBinary, X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kEtcdBinary, " is missing: run ./scripts/install-deps (Debian's etcd-server)"));
  }
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->options_ = options;
  cluster->dir_ = dir;
  cluster->token_ =
      absl::StrCat("fencegate-test-", getpid(), "-", absl::ToUnixNanos(absl::Now()));
  std::vector<std::string> peers;
  for (int i = 0; i < options.members; ++i) {
    Member member;
    member.name = absl::StrCat("m", i);
    if (options.hosts.empty()) {
      absl::StatusOr<int> client_port = PickFreePort();
      absl::StatusOr<int> peer_port = PickFreePort();
      if (!client_port.ok()) return client_port.status();
      if (!peer_port.ok()) return peer_port.status();
      member.client_port = *client_port;
      member.peer_port = *peer_port;
    } else {
      member.address = options.hosts[i].address;
      member.network_namespace = options.hosts[i].network_namespace;
      member.client_port = 2379;
      member.peer_port = 2380;
    }
    member.data_dir = absl::StrCat(dir, "/etcd-", member.name);
    peers.push_back(
        absl::StrCat(member.name, "=http://", member.address, ":", member.peer_port));
    cluster->members_.push_back(std::move(member));
  }
  cluster->initial_cluster_ = absl::StrJoin(peers, ",");
  etcd::EtcdClientOptions client_options;
  client_options.endpoints = cluster->endpoints();
  client_options.attempt_timeout = absl::Seconds(1);
  if (options.tls.enabled()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        MakeChannelCredentials(
            ClientTlsFiles{options.tls.client_ca, options.tls.cert, options.tls.key});
    if (!credentials.ok()) return credentials.status();
    client_options.credentials = *std::move(credentials);
  }
  cluster->client_ = std::make_unique<etcd::EtcdClient>(client_options);
  // All members first: a member of three serves only once it has a quorum.
  for (int i = 0; i < options.members; ++i) {
    absl::Status status = cluster->Launch(i, options.start_timeout);
    if (!status.ok()) return status;
  }
  for (int i = 0; i < options.members; ++i) {
    absl::Status status = cluster->members_[i].process->AwaitReady();
    if (!status.ok()) return status;
  }
  return cluster;
}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < size(); ++i) Kill(i).IgnoreError();
}

std::string EtcdCluster::endpoint(int i) const {
  return absl::StrCat(members_[i].address, ":", members_[i].client_port);
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> all;
  for (int i = 0; i < size(); ++i) all.push_back(endpoint(i));
  return all;
}

std::string EtcdCluster::url() const {
  return absl::StrCat("etcd://", absl::StrJoin(endpoints(), ","));
}

pid_t EtcdCluster::pid(int i) const {
  return running(i) ? members_[i].process->pid() : -1;
}

absl::Status EtcdCluster::Launch(int i, absl::Duration timeout) {
  Member& m = members_[i];
  const std::string client_url = absl::StrCat(options_.tls.enabled() ? "https" : "http",
                                              "://", m.address, ":", m.client_port);
  const std::string peer_url = absl::StrCat("http://", m.address, ":", m.peer_port);
  ServerProcessOptions server;
  server.process.argv = {
      kEtcdBinary,
      "--name=" + m.name,
      "--data-dir=" + m.data_dir,
      "--listen-client-urls=" + client_url,
      "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=" + peer_url,
      "--initial-advertise-peer-urls=" + peer_url,
      "--initial-cluster=" + initial_cluster_,
      "--initial-cluster-token=" + token_,
      "--initial-cluster-state=new",  // ignored once the data dir exists
      absl::StrCat("--heartbeat-interval=",
                   absl::ToInt64Milliseconds(options_.heartbeat)),
      absl::StrCat("--election-timeout=",
                   absl::ToInt64Milliseconds(options_.election_timeout)),
      "--logger=zap",
      "--log-outputs=stderr",
  };
  if (options_.tls.enabled()) {
    server.process.argv.push_back("--cert-file=" + options_.tls.cert);
    server.process.argv.push_back("--key-file=" + options_.tls.key);
    server.process.argv.push_back("--trusted-ca-file=" + options_.tls.client_ca);
    server.process.argv.push_back("--client-cert-auth");
  }
  server.process.network_namespace = m.network_namespace;
  server.dir = dir_;
  server.name = MemberName(i);
  server.host = m.address;
  server.port = m.client_port;
  server.start_timeout = timeout;
  server.readiness =
      Probe{[this, i](const ServerProcess& process) { return MemberReady(i, process); }};
  absl::StatusOr<std::unique_ptr<ServerProcess>> process =
      ServerProcess::Launch(std::move(server));
  if (!process.ok()) return process.status();
  m.process = *std::move(process);
  return absl::OkStatus();
}

absl::Status EtcdCluster::MemberReady(int i, const ServerProcess& process) {
  // etcd listens long before it serves, and a gRPC connection made in
  // between stalls for seconds: ask only once this start says it serves.
  if (process.LogSinceStart().find(kServing) == std::string::npos) {
    return absl::UnavailableError("it does not serve clients yet");
  }
  absl::StatusOr<etcdserverpb::StatusResponse> answer =
      client_->MemberStatus(endpoint(i), absl::Now() + absl::Seconds(1));
  if (!answer.ok()) return answer.status();
  if (answer->leader() == 0) return absl::UnavailableError("it knows no leader");
  return absl::OkStatus();
}

absl::Status EtcdCluster::Kill(int i) {
  Member& m = members_[i];
  if (m.process == nullptr) return absl::FailedPreconditionError("not running");
  m.process->Kill();
  m.process.reset();
  return absl::OkStatus();
}

absl::Status EtcdCluster::Pause(int i) {
  if (!running(i)) return absl::FailedPreconditionError("not running");
  return members_[i].process->Pause();
}

absl::Status EtcdCluster::Resume(int i) {
  if (!running(i)) return absl::FailedPreconditionError("not running");
  members_[i].process->Resume();
  return absl::OkStatus();
}

absl::Status EtcdCluster::Restart(int i, absl::Duration timeout) {
  if (running(i)) return absl::FailedPreconditionError("still running");
  absl::Status status = Launch(i, timeout);
  if (!status.ok()) return status;
  status = members_[i].process->AwaitReady();
  if (!status.ok()) members_[i].process.reset();
  return status;
}

absl::Status EtcdCluster::RestartMembers(const std::vector<int>& members,
                                         absl::Duration timeout) {
  for (int i : members) {
    if (running(i))
      return absl::FailedPreconditionError(absl::StrCat("member ", i, " runs"));
  }
  for (int i : members) {
    absl::Status status = Launch(i, timeout);
    if (!status.ok()) return status;
  }
  absl::Status first_error;
  for (int i : members) {
    absl::Status status = members_[i].process->AwaitReady();
    if (!status.ok()) {
      members_[i].process.reset();
      if (first_error.ok()) first_error = status;
    }
  }
  return first_error;
}

std::string EtcdCluster::UnexpectedExit(int i) {
  Member& m = members_[i];
  if (m.process == nullptr || m.process->process().Running()) return "";
  absl::StatusOr<int> status = m.process->process().Wait(absl::ZeroDuration());
  std::string exit = absl::StrCat(MemberName(i), " ",
                                  status.ok() ? DescribeWaitStatus(*status) : "exited",
                                  ":\n", LogTail(i));
  m.process.reset();
  return exit;
}

absl::StatusOr<int> EtcdCluster::Leader(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (absl::Now() < give_up) {
    std::map<uint64_t, int> member_of;  // member id -> index
    std::map<uint64_t, int> votes;      // leader id -> members naming it
    int asked = 0;
    for (int i = 0; i < size(); ++i) {
      if (!running(i)) continue;
      ++asked;
      absl::StatusOr<etcdserverpb::StatusResponse> answer =
          client_->MemberStatus(endpoint(i), absl::Now() + absl::Seconds(1));
      if (!answer.ok()) continue;
      member_of[answer->header().member_id()] = i;
      if (answer->leader() != 0) ++votes[answer->leader()];
    }
    for (const auto& [leader, count] : votes) {
      if (count == asked && member_of.count(leader) > 0) return member_of[leader];
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  return absl::DeadlineExceededError(
      absl::StrCat("the etcd members did not agree on a leader within ",
                   absl::FormatDuration(timeout)));
}

std::string EtcdCluster::LogTail(int i, size_t bytes) const {
  return FileTail(absl::StrCat(dir_, "/", MemberName(i), ".log"), bytes);
}

}  // namespace fencegate::testing
