// VirtualNetwork: hosts for a test, each in a network namespace of its own,
// joined by veth pairs to one bridge in a namespace of its own, and links
// between hosts that can be cut and healed, in one direction or both: the
// partitions of the torture suite's etcd-cluster topology
// (docs/torture-topologies.md).
//
//   <prefix>bridge   bridge br0; one veth end per host, "h-<host>"; an
//                    nftables table (bridge family) whose set `cuts` holds
//                    the (from, to) pairs of veth ends whose frames are
//                    dropped: a cut drops silently, as a real partition
//                    does (no reset, no ICMP), in the chosen directions
//   <prefix><host>   one per host: eth0 = 10.77.0.<n>/24, lo up
//
// Every address lives inside namespaces this object made; the namespace
// this process runs in is never touched. A process runs on a host through
// ChildProcess::Options::network_namespace (child_process.h); this process
// joins one with JoinFromThisThread().
//
// Names: prefix = "fgt-<pid>-<start time of this process in clock ticks>-",
// unique per run. The destructor deletes the run's namespaces. Create()
// first deletes stale ones: namespaces named "fgt-<pid>-<start>-..." whose
// process is gone (no such pid, or one started at another time: the pid was
// reused). Namespaces of live runs and every other namespace are left alone.
//
// REQUIRES: root (CAP_SYS_ADMIN and CAP_NET_ADMIN), iproute2 and nftables
// (./scripts/install-deps). Create() says which is missing.
//
// Thread safety: thread-safe after Create() (each call runs `ip` or `nft`).
#ifndef FENCEGATE_HARNESS_NETWORK_NAMESPACES_H_
#define FENCEGATE_HARNESS_NETWORK_NAMESPACES_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace fencegate::testing {

struct NetworkHost {
  std::string name;     // as given to Create()
  std::string netns;    // for ChildProcess::Options::network_namespace
  std::string address;  // its IPv4 address on the bridge
};

// Which ways a cut drops frames.
enum class CutDirection { kFromTo, kBothWays };

class VirtualNetwork {
 public:
  // Host names: letters, digits and '-', at most 13 characters (a veth
  // name is at most 15), distinct, at most 250 of them.
  static absl::StatusOr<std::unique_ptr<VirtualNetwork>> Create(
      const std::vector<std::string>& host_names);
  ~VirtualNetwork();
  VirtualNetwork(const VirtualNetwork&) = delete;
  VirtualNetwork& operator=(const VirtualNetwork&) = delete;

  const std::string& prefix() const { return prefix_; }
  // REQUIRES: `name` was given to Create().
  const NetworkHost& host(const std::string& name) const;

  // Drops every frame from host `from` to host `to` (and back, for
  // kBothWays) until healed. Idempotent. Pairs are given as (from, to).
  absl::Status Cut(const std::vector<std::pair<std::string, std::string>>& links,
                   CutDirection direction);
  // Lets those frames through again. Idempotent.
  absl::Status Heal(const std::vector<std::pair<std::string, std::string>>& links,
                    CutDirection direction);
  // Every cut healed.
  absl::Status HealAll();
  // The cuts in force, as "from>to" pairs of host names.
  std::vector<std::string> Cuts() const;

  // Moves the calling thread into `host`'s namespace. Threads it starts
  // afterwards are there too; threads started earlier, and children of
  // ChildProcess that name no namespace, are not.
  absl::Status JoinFromThisThread(const std::string& host) const;

  // Deletes the namespaces of earlier runs whose process is gone (see
  // above); returns how many. Create() calls it.
  static absl::StatusOr<int> RemoveStaleNamespaces();

 private:
  VirtualNetwork() = default;
  absl::Status Build();
  // Adds or removes the set elements for `links`.
  absl::Status ChangeCuts(const char* verb,
                          const std::vector<std::pair<std::string, std::string>>& links,
                          CutDirection direction);

  std::string prefix_;
  std::string bridge_netns_;
  std::map<std::string, NetworkHost> hosts_;
  std::vector<std::string> order_;  // host names as given
  mutable absl::Mutex mu_;
  // (from veth, to veth) in the nftables set now.
  std::set<std::pair<std::string, std::string>> cuts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_NETWORK_NAMESPACES_H_
