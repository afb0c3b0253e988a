#include "lockservice/server/lock_server_options.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/server_main/option_flags.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/etcd_lock_store.h"

namespace fencegate::lockservice {
namespace {

absl::Status CheckLimits(const LockLimits& limits) {
  if (limits.min_ttl <= absl::ZeroDuration() || limits.min_ttl > limits.max_ttl) {
    return absl::InvalidArgumentError("--min_ttl must be > 0 and <= --max_ttl");
  }
  struct NonNegative {
    const char* flag;
    absl::Duration value;
  };
  for (const NonNegative& d :
       {NonNegative{"--max_wait", limits.max_wait},
        NonNegative{"--lock_delay", limits.lock_delay},
        NonNegative{"--max_hold", limits.max_hold},
        NonNegative{"--waiter_reattach_grace", limits.waiter_reattach_grace}}) {
    if (d.value < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(d.flag, " must not be negative"));
    }
  }
  struct AtLeastOne {
    const char* flag;
    size_t value;
  };
  for (const AtLeastOne& n :
       {AtLeastOne{"--max_resource_bytes", limits.max_resource_bytes},
        AtLeastOne{"--max_holder_bytes", limits.max_holder_bytes},
        AtLeastOne{"--max_resources", limits.max_resources},
        AtLeastOne{"--max_holders_per_resource", limits.max_holders_per_resource},
        AtLeastOne{"--max_batch", limits.max_batch},
        AtLeastOne{"--max_pending", limits.max_pending}}) {
    if (n.value == 0) {
      return absl::InvalidArgumentError(absl::StrCat(n.flag, " must be at least 1"));
    }
  }
  if (limits.max_multi_resources < 1 ||
      limits.max_multi_resources > LockManager::kMaxMultiResources) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_multi_resources must be 1 to ", LockManager::kMaxMultiResources,
        " (a multi-resource grant is one commit, which must fit one etcd transaction)"));
  }
  return absl::OkStatus();
}

absl::Status CheckEtcd(const LockServerOptions& options) {
  absl::StatusOr<std::vector<std::string>> endpoints =
      etcd::ParseEtcdUrl(options.store, "--store");
  if (!endpoints.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(endpoints.status().message(), " (or --store=sqlite, the default)"));
  }
  if (options.etcd_session_ttl < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--etcd_session_ttl must be at least 1s (etcd leases have whole seconds)");
  }
  if (EtcdMaxBatch(options.etcd_max_txn_ops) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--etcd_max_txn_ops must be at least ",
                     2 + kEtcdMaxOpsPerItem * LockManager::kMaxDecisionItems,
                     " (it is etcd's --max-txn-ops, default 128)"));
  }
  if (options.etcd_prefix.empty()) {
    return absl::InvalidArgumentError("--etcd_prefix must not be empty");
  }
  if (options.serving.tls.enabled() && options.peer_tls_ca.empty() &&
      options.serving.tls.client_ca.empty()) {
    return absl::InvalidArgumentError(
        "with TLS, --store=etcd needs --peer_tls_ca (or --tls_client_ca): the CA "
        "that signed the other instances' certificates, to forward to the leader");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LockServerOptions::Validate() const {
  if (absl::Status status = serving.Validate(); !status.ok()) return status;
  if (absl::Status status = CheckLimits(limits); !status.ok()) return status;
  if (session_limits.max_in_flight == 0) {
    return absl::InvalidArgumentError("--max_stream_in_flight must be at least 1");
  }
  if (max_sessions == 0) {
    return absl::InvalidArgumentError("--max_sessions must be at least 1");
  }
  if (max_election_observers == 0) {
    return absl::InvalidArgumentError("--max_election_observers must be at least 1");
  }
  if (max_fence_watchers == 0) {
    return absl::InvalidArgumentError("--max_fence_watchers must be at least 1");
  }
  if (store == "sqlite") {
    if (db_path.empty()) return absl::InvalidArgumentError("--db must not be empty");
    return absl::OkStatus();
  }
  return CheckEtcd(*this);
}

size_t EtcdMaxBatch(int etcd_max_txn_ops) {
  const int items = (etcd_max_txn_ops - 2) / kEtcdMaxOpsPerItem;
  const int slack = static_cast<int>(LockManager::kMaxDecisionItems) - 1;
  return items > slack ? static_cast<size_t>(items - slack) : 0;
}

LockServerOptions LockServerOptions::FromFlags() {
  return ServerOptionsFromFlags<LockServerOptions>();
}

std::string LockServerOptions::Describe() const { return DescribeServerOptions(*this); }

}  // namespace fencegate::lockservice
