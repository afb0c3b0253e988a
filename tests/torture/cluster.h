// Cluster: the two servers of one torture run, as ServerNodes: the test
// builds of the lock service (with its lease history) and the gateway, the
// schedule's planted bug in the server it belongs to, and, on a secure
// schedule, signed tokens on both (a fresh key file in the run directory)
// and grant-time fencing on the gateway (--lockservice).
//
// Thread safety: Start() and Heal() from one thread; the nodes themselves
// are thread-safe.
#ifndef FENCEGATE_TESTS_TORTURE_CLUSTER_H_
#define FENCEGATE_TESTS_TORTURE_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/torture/schedule.h"
#include "tests/torture/server_node.h"

namespace fencegate::torture {

struct ClusterOptions {
  std::string lockservice_binary;
  std::string gateway_binary;
  std::string faketime_library;
  std::string run_dir;
};

class Cluster {
 public:
  Cluster(const Schedule& schedule, ClusterOptions options);

  // Starts the lock service, then the gateway (which may follow it).
  absl::Status Start();
  // Undoes whatever faults left behind: every server running, continued,
  // with no failpoint armed and its wall clock back on real time. Problems,
  // and a server that exited by itself since it was last checked, are
  // appended to `errors`.
  void Heal(std::vector<std::string>* errors);

  ServerNode& lockservice() { return *lockservice_; }
  ServerNode& gateway() { return *gateway_; }

 private:
  const Schedule& schedule_;
  const ClusterOptions options_;
  std::unique_ptr<ServerNode> lockservice_;
  std::unique_ptr<ServerNode> gateway_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_CLUSTER_H_
