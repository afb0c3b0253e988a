// LockServerOptions: everything a fencegate-lockservice is started with,
// each flag bound to the field it fills in main.cc
// (common/server_main/option_flags.h). The defaults here are the flags'
// defaults.
//
// Validate() is the one place a setting that cannot work is refused:
// LockServer::Start() calls it first, so a server started in-process (the
// tests) gets the same checks as one started by main().
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_OPTIONS_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_OPTIONS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/core/stream_session.h"
#include "common/server/server_setup.h"
#include "fencegate/client_tls_files.h"
#include "lockservice/core/lock_limits.h"

namespace fencegate::lockservice {

struct LockServerOptions {
  // --listen (default 127.0.0.1:7070), --port_file, --shutdown_grace,
  // --signing_keys (set = every grant is signed, and Renew/Release must
  // carry the signature), --tls_* (server_setup.h).
  ServingOptions serving = DefaultServing();
  // Where tokens and leases live: "sqlite" (the file db_path), or
  // "etcd://host:port[,host:port...]" (an etcd cluster; see
  // docs/operations-etcd.md).
  std::string store = "sqlite";
  // SQLite database file; created if missing.
  std::string db_path = "fencegate-locks.db";
  LockLimits limits;
  // Bounds of each Session stream (--max_stream_in_flight;
  // common/core/stream_session.h).
  StreamLimits session_limits;
  // Session streams open at once (--max_sessions); one more ends at once
  // with RESOURCE_EXHAUSTED (common/server/stream_registry.h).
  size_t max_sessions = 10000;
  // WatchFences streams open at once (--max_fence_watchers: the gateways
  // that follow this service's grants); one more ends at once with
  // RESOURCE_EXHAUSTED (fence_watch.h).
  size_t max_fence_watchers = 1000;
  // Observe streams open at once (--max_election_observers); one more ends
  // at once with RESOURCE_EXHAUSTED (election_watch.h).
  size_t max_election_observers = 10000;

  // etcd store only.
  // The address other instances forward calls to ("host:port"). Empty: the
  // listen address with the bound port (a wildcard host needs an explicit
  // address).
  std::string advertise;
  // Every key of this deployment starts with it.
  std::string etcd_prefix = "/fencegate/lockservice/";
  // The leader's etcd lease: how long a dead leader blocks a new one.
  absl::Duration etcd_session_ttl = absl::Seconds(5);
  // etcd's --max-txn-ops: one group commit is one txn of at most this many
  // operations, so it caps limits.max_batch.
  int etcd_max_txn_ops = 128;
  // TLS to the etcd members; empty: plaintext.
  ClientTlsFiles etcd_tls;
  // With TLS: the CA that signed the other instances' certificates, for
  // forwarding to the leader (default: serving.tls.client_ca). Standbys
  // present serving.tls.cert as their client certificate, and a leader
  // believes the caller a forwarded call names only from a peer whose
  // certificate subject is that of its own certificate: all instances share
  // one certificate subject.
  std::string peer_tls_ca;

  // OK, or INVALID_ARGUMENT naming the flag and the limit it breaks. Reads
  // no file and opens no connection.
  absl::Status Validate() const;

  // What the command line set (the flags main.cc binds: option_flags.h);
  // defaults for the rest. Reads the flags: call after InitServerMain.
  static LockServerOptions FromFlags();
  // Every flag's setting as "name=value ..." (the start-up line).
  std::string Describe() const;

  static ServingOptions DefaultServing() {
    ServingOptions serving;
    serving.listen = "127.0.0.1:7070";
    serving.metrics_auto_port = 9464;
    return serving;
  }
};

// The largest batch (in the manager's items) that one etcd txn of
// `etcd_max_txn_ops` operations holds: 2 operations and kEtcdMaxOpsPerItem
// per item, and a batch is up to max_batch + LockManager::kMaxDecisionItems
// - 1 items, since a decision is never cut. 0: none fits (Validate()
// refuses it).
size_t EtcdMaxBatch(int etcd_max_txn_ops);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_SERVER_OPTIONS_H_
