// fencegate-lockservice: leases with monotonic fencing tokens over gRPC.
// Each flag below fills its field of LockServerOptions (option_flags.h;
// the flags both servers take are in common/server_main/server_main.cc);
// everything else is in lock_server.h.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/base/log.h"
#include "common/build_info/build_info.h"
#include "common/server/tls.h"
#include "common/server_main/option_flags.h"
#include "common/server_main/server_main.h"
#include "lockservice/server/lock_server.h"

using Options = fencegate::lockservice::LockServerOptions;

FENCEGATE_OPTION_FLAG(Options, std::string, listen, serving.listen,
                      fencegate::kListenFlagHelp);
FENCEGATE_OPTION_FLAG(
    Options, std::string, store, store,
    "where tokens and leases live: sqlite (the file --db; one instance) or "
    "etcd://host:port[,host:port...] (an etcd cluster that several "
    "instances share: one leads, the others forward to it)");
FENCEGATE_OPTION_FLAG(
    Options, std::string, db, db_path,
    "SQLite database file holding tokens and leases (created if missing)");
FENCEGATE_OPTION_FLAG(Options, std::string, advertise, advertise,
                      "etcd store: host:port at which the other instances reach this one "
                      "(default: --listen's host with the bound port)");
FENCEGATE_OPTION_FLAG(Options, std::string, etcd_prefix, etcd_prefix,
                      "etcd store: every key of this deployment starts with it");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, etcd_session_ttl, etcd_session_ttl,
                      "etcd store: TTL of the leader's etcd lease; a leader that dies "
                      "blocks the next one this long (at least 1s)");
FENCEGATE_OPTION_FLAG(Options, int, etcd_max_txn_ops, etcd_max_txn_ops,
                      "etcd store: etcd's --max-txn-ops; caps --max_batch so one group "
                      "commit fits in one txn");
FENCEGATE_OPTION_FLAG(
    Options, std::string, etcd_tls_ca, etcd_tls.ca,
    "etcd store: PEM CA of the etcd members' certificates; set = TLS to etcd");
FENCEGATE_OPTION_FLAG(Options, std::string, etcd_tls_cert, etcd_tls.cert,
                      "etcd store: client certificate for etcd (--client-cert-auth)");
FENCEGATE_OPTION_FLAG(Options, std::string, etcd_tls_key, etcd_tls.key,
                      "etcd store: private key of --etcd_tls_cert");
FENCEGATE_OPTION_FLAG(
    Options, std::string, peer_tls_ca, peer_tls_ca,
    "etcd store with TLS: PEM CA of the other instances' certificates, for "
    "forwarding to the leader (default: --tls_client_ca). Every instance "
    "presents --tls_cert, and all share one certificate subject");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, min_ttl, limits.min_ttl,
                      "smallest lease TTL accepted");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, max_ttl, limits.max_ttl,
                      "largest lease TTL accepted");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, max_wait, limits.max_wait,
                      "longest wait a blocking Acquire may ask for");
FENCEGATE_OPTION_FLAG(Options, size_t, max_resource_bytes, limits.max_resource_bytes,
                      "longest resource name, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_holder_bytes, limits.max_holder_bytes,
                      "longest holder name, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_request_id_bytes, limits.max_request_id_bytes,
                      "longest request id, in bytes");
FENCEGATE_OPTION_FLAG(Options, size_t, max_waiters_per_resource,
                      limits.max_waiters_per_resource,
                      "parked Acquire calls per resource before RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(Options, size_t, max_waiters_total, limits.max_waiters_total,
                      "parked Acquire calls in all before RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(Options, size_t, max_multi_resources, limits.max_multi_resources,
                      "resources one Acquire may name at once (`resources`, all granted "
                      "together or none), 1 to 8");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_holders_per_resource, limits.max_holders_per_resource,
    "shared leases held on one resource at once (one more waits, or a "
    "try-lock is not acquired), and the most permits a semaphore may have "
    "(a PERMIT Acquire asking more is INVALID_ARGUMENT)");
FENCEGATE_OPTION_FLAG(Options, size_t, max_resources, limits.max_resources,
                      "resources tracked at once (held, waited on or delayed)");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, lock_delay, limits.lock_delay,
                      "after a lease expires (not on release), keep the resource from "
                      "being granted for this long; 0 = off");
FENCEGATE_OPTION_FLAG(Options, absl::Duration, max_hold, limits.max_hold,
                      "cap on a lease's total life across renewals; 0 = no cap");
FENCEGATE_OPTION_FLAG(
    Options, absl::Duration, waiter_reattach_grace, limits.waiter_reattach_grace,
    "after a restart or a failover, how long a queued waiter keeps its place "
    "for its client's retry (the queue waits for it meanwhile)");
FENCEGATE_OPTION_FLAG(Options, size_t, max_batch, limits.max_batch,
                      "most requests committed in one group-commit transaction");
FENCEGATE_OPTION_FLAG(Options, size_t, max_pending, limits.max_pending,
                      "most decided calls waiting for the store; past it calls get "
                      "RESOURCE_EXHAUSTED and nothing is applied");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_stream_in_flight, session_limits.max_in_flight,
    "calls of one Session stream waiting for their answers (parked Acquires "
    "among them) before new ones get RESOURCE_EXHAUSTED; also the most calls in "
    "one stream message, and how many unsent answers and pushes make the service "
    "stop reading a stream");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_sessions, max_sessions,
    "Session streams open at once; one more ends at once with RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_fence_watchers, max_fence_watchers,
    "WatchFences streams (gateways following the grants) open at once; one more "
    "ends at once with RESOURCE_EXHAUSTED");
FENCEGATE_OPTION_FLAG(
    Options, size_t, max_election_observers, max_election_observers,
    "Observe streams (watching elections) open at once; one more ends at once "
    "with RESOURCE_EXHAUSTED");

int main(int argc, char** argv) {
  fencegate::InitServerMain(
      "fencegate-lockservice", argc, argv,
      "leases with monotonic fencing tokens over gRPC.\n"
      "Usage: fencegate-lockservice [--listen=127.0.0.1:7070] [--db=FILE] ...\n"
      "   or: fencegate-lockservice --store=etcd://host:port[,host:port...] ...");
  const Options options = Options::FromFlags();
  absl::StatusOr<std::unique_ptr<fencegate::lockservice::LockServer>> server =
      fencegate::lockservice::LockServer::Start(options);
  if (!server.ok()) {
    fencegate::LogError("fencegate-lockservice failed to start: %s",
                        server.status().ToString());
    return EXIT_FAILURE;
  }
  // The flags as given, then what the server made of them.
  fencegate::LogInfo(
      "%s serving on port %d (%s batch_limit=%d transport=%s signing=%s authorization=%s "
      "metrics=%s)",
      fencegate::VersionLine(), (*server)->port(), options.Describe(),
      (*server)->max_batch(), fencegate::DescribeTls(options.serving.tls),
      (*server)->DescribeSigning(), (*server)->DescribePolicy(),
      (*server)->DescribeMetrics());
  return fencegate::ServeUntilShutdownSignal("fencegate-lockservice", **server);
}
