#include "tests/testing/etcd_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace fencegate::testing {
namespace {

// A port that was free a moment ago (etcd cannot listen on port 0 and say
// which port it got).
absl::StatusOr<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return absl::InternalError("cannot bind a free port on 127.0.0.1");
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

// What etcd 3.4 logs once it serves clients.
constexpr char kServing[] = "serving client traffic";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(
    const std::string& dir, EtcdClusterOptions options) {
  if (options.members != 1 && options.members != 3) {
    return absl::InvalidArgumentError("an EtcdCluster has 1 or 3 members");
  }
  if (access(kEtcdBinary, X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kEtcdBinary, " is missing: run ./scripts/install-deps (Debian's etcd-server)"));
  }
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->options_ = options;
  cluster->token_ = absl::StrCat("fencegate-test-", getpid(), "-",
                                 absl::ToUnixNanos(absl::Now()));
  std::vector<std::string> peers;
  for (int i = 0; i < options.members; ++i) {
    Member member;
    member.name = absl::StrCat("m", i);
    absl::StatusOr<int> client_port = FreePort();
    absl::StatusOr<int> peer_port = FreePort();
    if (!client_port.ok()) return client_port.status();
    if (!peer_port.ok()) return peer_port.status();
    member.client_port = *client_port;
    member.peer_port = *peer_port;
    member.data_dir = absl::StrCat(dir, "/etcd-", member.name);
    member.log_path = absl::StrCat(dir, "/etcd-", member.name, ".log");
    peers.push_back(absl::StrCat(member.name, "=http://127.0.0.1:", member.peer_port));
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
  for (int i = 0; i < options.members; ++i) {
    absl::Status status = cluster->Spawn(i);
    if (!status.ok()) return status;
  }
  for (int i = 0; i < options.members; ++i) {
    absl::Status status = cluster->WaitReady(i, options.start_timeout);
    if (!status.ok()) return status;
  }
  return cluster;
}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < size(); ++i) Kill(i).IgnoreError();
}

std::string EtcdCluster::endpoint(int i) const {
  return absl::StrCat("127.0.0.1:", members_[i].client_port);
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> all;
  for (int i = 0; i < size(); ++i) all.push_back(endpoint(i));
  return all;
}

std::string EtcdCluster::url() const {
  return absl::StrCat("etcd://", absl::StrJoin(endpoints(), ","));
}

pid_t EtcdCluster::pid(int i) const { return members_[i].pid; }

absl::Status EtcdCluster::Spawn(int i) {
  Member& m = members_[i];
  m.log_offset = ReadFile(m.log_path).size();
  const std::string client_url = absl::StrCat(
      options_.tls.enabled() ? "https" : "http", "://127.0.0.1:", m.client_port);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", m.peer_port);
  std::vector<std::string> args = {
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
      absl::StrCat("--heartbeat-interval=", absl::ToInt64Milliseconds(options_.heartbeat)),
      absl::StrCat("--election-timeout=",
                   absl::ToInt64Milliseconds(options_.election_timeout)),
      "--logger=zap",
      "--log-outputs=stderr",
  };
  if (options_.tls.enabled()) {
    args.push_back("--cert-file=" + options_.tls.cert);
    args.push_back("--key-file=" + options_.tls.key);
    args.push_back("--trusted-ca-file=" + options_.tls.client_ca);
    args.push_back("--client-cert-auth");
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log = open(m.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (log < 0 || null < 0) {
    if (log >= 0) close(log);
    if (null >= 0) close(null);
    return absl::InternalError(absl::StrCat("cannot open ", m.log_path));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. If the test process dies
    // (a crash, or ctest's timeout), etcd goes with it instead of staying
    // behind on the machine.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log, STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
    execv(kEtcdBinary, argv.data());
    _exit(127);
  }
  close(log);
  close(null);
  if (pid < 0) return absl::InternalError("cannot fork to start etcd");
  m.pid = pid;
  return absl::OkStatus();
}

absl::Status EtcdCluster::WaitReady(int i, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  absl::Status last = absl::DeadlineExceededError("not asked yet");
  while (absl::Now() < give_up) {
    int status = 0;
    if (waitpid(members_[i].pid, &status, WNOHANG) == members_[i].pid) {
      members_[i].pid = -1;
      return absl::InternalError(absl::StrCat("etcd member ", i, " exited while starting:\n",
                                              LogTail(i)));
    }
    // etcd listens long before it serves, and a gRPC connection made in
    // between stalls for seconds: ask only once this start says it serves.
    if (ReadFile(members_[i].log_path).find(kServing, members_[i].log_offset) ==
        std::string::npos) {
      absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
      continue;
    }
    absl::StatusOr<etcdserverpb::StatusResponse> answer =
        client_->MemberStatus(endpoint(i), absl::Now() + absl::Seconds(1));
    if (answer.ok() && answer->leader() != 0) return absl::OkStatus();
    if (!answer.ok()) last = answer.status();
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "etcd member ", i, " not ready within ", absl::FormatDuration(timeout), " (",
      last.message(), "):\n", LogTail(i)));
}

absl::Status EtcdCluster::Kill(int i) {
  Member& m = members_[i];
  if (m.pid <= 0) return absl::FailedPreconditionError("not running");
  kill(m.pid, SIGKILL);
  int status = 0;
  waitpid(m.pid, &status, 0);
  m.pid = -1;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Restart(int i, absl::Duration timeout) {
  if (members_[i].pid > 0) return absl::FailedPreconditionError("still running");
  absl::Status status = Spawn(i);
  if (!status.ok()) return status;
  return WaitReady(i, timeout);
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
  return absl::DeadlineExceededError(absl::StrCat(
      "the etcd members did not agree on a leader within ", absl::FormatDuration(timeout)));
}

std::string EtcdCluster::LogTail(int i, size_t bytes) const {
  std::string log = ReadFile(members_[i].log_path);
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace fencegate::testing
