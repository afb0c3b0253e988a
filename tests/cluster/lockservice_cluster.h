// LockServiceCluster: a replicated lock service for the cluster tests: an
// EtcdCluster (1 or 3 members) and several real fencegate-lockservice
// processes on it (--store=etcd://..., port 0, a short etcd session TTL so
// a failover takes seconds). Says which instance leads (the leader key's
// value in etcd, confirmed by that instance's health), and gives clients
// the target that lists every instance (gRPC's "ipv4:a,b" with pick_first).
//
// Only processes it started are signalled, by PID.
//
// Thread safety: one thread drives it (the test's main thread: etcd members
// die with the thread that started them).
#ifndef FENCEGATE_TESTS_CLUSTER_LOCKSERVICE_CLUSTER_H_
#define FENCEGATE_TESTS_CLUSTER_LOCKSERVICE_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client_tls_files.h"
#include "tests/testing/etcd_cluster.h"
#include "harness/server_process.h"

namespace fencegate::testing {

struct LockServiceClusterOptions {
  int etcd_members = 1;
  int instances = 2;
  absl::Duration session_ttl = absl::Seconds(2);
  std::vector<std::string> extra_args;  // for every instance
  // TLS: etcd serves with `etcd_tls` (EtcdClusterOptions::tls), and the
  // fixture reaches the instances (health checks) with `client_tls`.
  ServerTlsFiles etcd_tls;
  ClientTlsFiles client_tls;
};

class LockServiceCluster {
 public:
  static absl::StatusOr<std::unique_ptr<LockServiceCluster>> Start(
      const std::string& dir, LockServiceClusterOptions options);

  EtcdCluster& etcd() { return *etcd_; }
  int instances() const { return static_cast<int>(instances_.size()); }
  // REQUIRES: instance i runs.
  ServerProcess& instance(int i) { return *instances_[i]; }
  bool running(int i) const { return instances_[i] != nullptr; }
  // "ipv4:127.0.0.1:<port of instance 0>,..." in the order given (default:
  // every instance, in index order).
  std::string Target(std::vector<int> order = {}) const;

  // The instance that leads: named by the leader key and SERVING.
  absl::StatusOr<int> WaitLeader(absl::Duration timeout = absl::Seconds(60));
  // Until instance i reports SERVING (it leads or knows the leader).
  absl::Status WaitServing(int i, absl::Duration timeout = absl::Seconds(60));
  // SIGKILL (no hand-over), or SIGSTOP / SIGCONT (a paused process).
  void Kill(int i);
  absl::Status Pause(int i);
  void Resume(int i);
  // Starts instance i again (on a new port).
  absl::Status Restart(int i);
  // Logs of every instance, for failure messages.
  std::string LogTails();

 private:
  LockServiceCluster() = default;
  absl::Status StartInstance(int i);

  std::string dir_;
  LockServiceClusterOptions options_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::vector<std::unique_ptr<ServerProcess>> instances_;
  std::vector<int> ports_;  // last known port of each instance
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_CLUSTER_LOCKSERVICE_CLUSTER_H_
