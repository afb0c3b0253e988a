// EtcdCluster: an etcd cluster of 1 or 3 members for tests: Debian's
// /usr/bin/etcd processes (ServerProcess) on 127.0.0.1, free ports picked at
// start (below the ephemeral range, free_port.h), data and logs in a
// directory of the test's, heartbeat and election timeout tuned down so a
// new etcd leader is elected within a second. Members can be killed,
// paused and restarted (same ports, same data); Leader() says which member
// the cluster follows.
//
// Members can also run on hosts of a VirtualNetwork (network_namespaces.h,
// EtcdClusterOptions::hosts): each in its host's namespace, on the host's
// address and etcd's usual ports (2379 for clients, 2380 for peers). The
// cluster's own client then reaches them from the namespace of the thread
// that makes its connections: call Start() and the rest from a thread in a
// namespace that routes to the hosts.
//
// Only processes this object started are signalled, by PID; the destructor
// SIGKILLs those still running, and a member dies with the test process
// (ChildProcess's death signal), so a crashed test leaves no etcd behind.
//
// Thread safety: one thread drives a cluster; endpoint queries are const.
#ifndef FENCEGATE_TESTS_TESTING_ETCD_CLUSTER_H_
#define FENCEGATE_TESTS_TESTING_ETCD_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/server/tls.h"
#include "lockservice/etcd/etcd_client.h"
#include "harness/server_process.h"

namespace fencegate::testing {

// Where the tests find etcd (install-deps installs etcd-server).
inline constexpr char kEtcdBinary[] = "/usr/bin/etcd";

// Where one member runs: a network namespace and its address there.
struct EtcdMemberHost {
  std::string network_namespace;
  std::string address;
};

struct EtcdClusterOptions {
  int members = 1;  // 1 or 3
  // Empty: every member on 127.0.0.1 of this namespace, on free ports.
  // Else one per member (see above).
  std::vector<EtcdMemberHost> hosts;
  absl::Duration heartbeat = absl::Milliseconds(50);
  absl::Duration election_timeout = absl::Milliseconds(500);
  // Start() gives up after this (a loaded machine starts etcd slowly).
  absl::Duration start_timeout = absl::Seconds(60);
  // Set: clients reach the members over TLS with this certificate, and must
  // present one client_ca signed (etcd's --client-cert-auth). The cluster's
  // own client presents the same certificate. Peers stay plaintext.
  ServerTlsFiles tls;
};

class EtcdCluster {
 public:
  // Starts the members in `dir` (which must exist) and waits until the
  // cluster has a leader and answers.
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(
      const std::string& dir, EtcdClusterOptions options = EtcdClusterOptions());
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // "<address>:<client port>" of member i.
  std::string endpoint(int i) const;
  std::vector<std::string> endpoints() const;
  // "etcd://a,b,c": fencegate-lockservice's --store.
  std::string url() const;
  // -1 when member i is not running.
  pid_t pid(int i) const;
  bool running(int i) const { return members_[i].process != nullptr; }

  // SIGKILL; the data stays for Restart().
  absl::Status Kill(int i);
  // SIGSTOP (returns once it is stopped) and SIGCONT.
  absl::Status Pause(int i);
  absl::Status Resume(int i);
  // Starts member i again on its ports and data; waits until it answers.
  absl::Status Restart(int i, absl::Duration timeout = absl::Seconds(60));
  // The same for several members at once, which may need each other for a
  // quorum (all of them after a crash of the whole cluster): starts them
  // all, then waits for each.
  absl::Status RestartMembers(const std::vector<int>& members,
                              absl::Duration timeout = absl::Seconds(60));
  // If member i's process exited without Kill(), says how (with its log's
  // tail) and forgets it (running(i) turns false); "" otherwise.
  std::string UnexpectedExit(int i);
  // The member every running member names as raft leader, once they agree.
  absl::StatusOr<int> Leader(absl::Duration timeout = absl::Seconds(60));
  // A client of the whole cluster.
  etcd::EtcdClient& client() { return *client_; }
  // The last `bytes` of member i's log, for failure messages.
  std::string LogTail(int i, size_t bytes = 3000) const;

 private:
  struct Member {
    std::string name;
    std::string address = "127.0.0.1";
    std::string network_namespace;  // empty: this process's
    int client_port = 0;
    int peer_port = 0;
    std::string data_dir;
    std::unique_ptr<ServerProcess> process;  // null: not running
  };

  EtcdCluster() = default;
  // Starts member i; AwaitReady() then waits until it serves clients and
  // names a leader.
  absl::Status Launch(int i, absl::Duration timeout);
  // OK once member i's current start serves clients and names a leader.
  absl::Status MemberReady(int i, const ServerProcess& process);

  EtcdClusterOptions options_;
  std::string dir_;
  std::string initial_cluster_;
  std::string token_;
  std::vector<Member> members_;
  std::unique_ptr<etcd::EtcdClient> client_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_ETCD_CLUSTER_H_
