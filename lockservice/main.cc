// fencegate-lockservice: leases with monotonic fencing tokens over gRPC.
// Flags fill LockServerOptions (those both servers take are in
// common/server_main.h); everything else is in lock_server.h.
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/base/log.h"
#include "common/build_info/build_info.h"
#include "common/server_main/server_main.h"
#include "lockservice/lock_server.h"

namespace {
const fencegate::lockservice::LockServerOptions kDefaults;
const fencegate::lockservice::LockLimits& kLimits = kDefaults.limits;
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.serving.listen, fencegate::kListenFlagHelp);
ABSL_FLAG(std::string, store, kDefaults.store,
          "where tokens and leases live: sqlite (the file --db; one instance) or "
          "etcd://host:port[,host:port...] (an etcd cluster that several "
          "instances share: one leads, the others forward to it)");
ABSL_FLAG(std::string, db, kDefaults.db_path,
          "SQLite database file holding tokens and leases (created if missing)");
ABSL_FLAG(std::string, advertise, kDefaults.advertise,
          "etcd store: host:port at which the other instances reach this one "
          "(default: --listen's host with the bound port)");
ABSL_FLAG(std::string, etcd_prefix, kDefaults.etcd_prefix,
          "etcd store: every key of this deployment starts with it");
ABSL_FLAG(absl::Duration, etcd_session_ttl, kDefaults.etcd_session_ttl,
          "etcd store: TTL of the leader's etcd lease; a leader that dies "
          "blocks the next one this long (at least 1s)");
ABSL_FLAG(int, etcd_max_txn_ops, kDefaults.etcd_max_txn_ops,
          "etcd store: etcd's --max-txn-ops; caps --max_batch so one group "
          "commit fits in one txn");
ABSL_FLAG(std::string, etcd_tls_ca, "",
          "etcd store: PEM CA of the etcd members' certificates; set = TLS to etcd");
ABSL_FLAG(std::string, etcd_tls_cert, "",
          "etcd store: client certificate for etcd (--client-cert-auth)");
ABSL_FLAG(std::string, etcd_tls_key, "", "etcd store: private key of --etcd_tls_cert");
ABSL_FLAG(std::string, peer_tls_ca, "",
          "etcd store with TLS: PEM CA of the other instances' certificates, for "
          "forwarding to the leader (default: --tls_client_ca). Every instance "
          "presents --tls_cert, and all share one certificate subject");
ABSL_FLAG(absl::Duration, min_ttl, kLimits.min_ttl, "smallest lease TTL accepted");
ABSL_FLAG(absl::Duration, max_ttl, kLimits.max_ttl, "largest lease TTL accepted");
ABSL_FLAG(absl::Duration, max_wait, kLimits.max_wait,
          "longest wait a blocking Acquire may ask for");
ABSL_FLAG(size_t, max_resource_bytes, kLimits.max_resource_bytes,
          "longest resource name, in bytes");
ABSL_FLAG(size_t, max_holder_bytes, kLimits.max_holder_bytes,
          "longest holder name, in bytes");
ABSL_FLAG(size_t, max_request_id_bytes, kLimits.max_request_id_bytes,
          "longest request id, in bytes");
ABSL_FLAG(size_t, max_waiters_per_resource, kLimits.max_waiters_per_resource,
          "parked Acquire calls per resource before RESOURCE_EXHAUSTED");
ABSL_FLAG(size_t, max_waiters_total, kLimits.max_waiters_total,
          "parked Acquire calls in all before RESOURCE_EXHAUSTED");
ABSL_FLAG(size_t, max_multi_resources, kLimits.max_multi_resources,
          "resources one Acquire may name at once (`resources`, all granted "
          "together or none), 1 to 8");
ABSL_FLAG(size_t, max_holders_per_resource, kLimits.max_holders_per_resource,
          "shared leases held on one resource at once (one more waits, or a "
          "try-lock is not acquired), and the most permits a semaphore may have "
          "(a PERMIT Acquire asking more is INVALID_ARGUMENT)");
ABSL_FLAG(size_t, max_resources, kLimits.max_resources,
          "resources tracked at once (held, waited on or delayed)");
ABSL_FLAG(absl::Duration, lock_delay, kLimits.lock_delay,
          "after a lease expires (not on release), keep the resource from "
          "being granted for this long; 0 = off");
ABSL_FLAG(absl::Duration, max_hold, kLimits.max_hold,
          "cap on a lease's total life across renewals; 0 = no cap");
ABSL_FLAG(absl::Duration, waiter_reattach_grace, kLimits.waiter_reattach_grace,
          "after a restart or a failover, how long a queued waiter keeps its place "
          "for its client's retry (the queue waits for it meanwhile)");
ABSL_FLAG(size_t, max_batch, kLimits.max_batch,
          "most requests committed in one group-commit transaction");
ABSL_FLAG(size_t, max_pending, kLimits.max_pending,
          "most decided calls waiting for the store; past it calls get "
          "RESOURCE_EXHAUSTED and nothing is applied");
ABSL_FLAG(size_t, max_stream_in_flight, kDefaults.session_limits.max_in_flight,
          "calls of one Session stream waiting for their answers (parked Acquires "
          "among them) before new ones get RESOURCE_EXHAUSTED; also the most calls in "
          "one stream message, and how many unsent answers and pushes make the service "
          "stop reading a stream");
ABSL_FLAG(size_t, max_sessions, kDefaults.max_sessions,
          "Session streams open at once; one more ends at once with RESOURCE_EXHAUSTED");
ABSL_FLAG(size_t, max_fence_watchers, kDefaults.max_fence_watchers,
          "WatchFences streams (gateways following the grants) open at once; one more "
          "ends at once with RESOURCE_EXHAUSTED");

int main(int argc, char** argv) {
  fencegate::InitServerMain(
      "fencegate-lockservice", argc, argv,
      "leases with monotonic fencing tokens over gRPC.\n"
      "Usage: fencegate-lockservice [--listen=127.0.0.1:7070] [--db=FILE] ...\n"
      "   or: fencegate-lockservice --store=etcd://host:port[,host:port...] ...");

  fencegate::lockservice::LockServerOptions options;
  options.serving =
      fencegate::ServingOptionsFromFlags(absl::GetFlag(FLAGS_listen), options.serving);
  options.store = absl::GetFlag(FLAGS_store);
  options.db_path = absl::GetFlag(FLAGS_db);
  options.advertise = absl::GetFlag(FLAGS_advertise);
  options.etcd_prefix = absl::GetFlag(FLAGS_etcd_prefix);
  options.etcd_session_ttl = absl::GetFlag(FLAGS_etcd_session_ttl);
  options.etcd_max_txn_ops = absl::GetFlag(FLAGS_etcd_max_txn_ops);
  options.etcd_tls.ca = absl::GetFlag(FLAGS_etcd_tls_ca);
  options.etcd_tls.cert = absl::GetFlag(FLAGS_etcd_tls_cert);
  options.etcd_tls.key = absl::GetFlag(FLAGS_etcd_tls_key);
  options.peer_tls_ca = absl::GetFlag(FLAGS_peer_tls_ca);
  fencegate::lockservice::LockLimits& limits = options.limits;
  limits.min_ttl = absl::GetFlag(FLAGS_min_ttl);
  limits.max_ttl = absl::GetFlag(FLAGS_max_ttl);
  limits.max_wait = absl::GetFlag(FLAGS_max_wait);
  limits.max_resource_bytes = absl::GetFlag(FLAGS_max_resource_bytes);
  limits.max_holder_bytes = absl::GetFlag(FLAGS_max_holder_bytes);
  limits.max_request_id_bytes = absl::GetFlag(FLAGS_max_request_id_bytes);
  limits.max_waiters_per_resource = absl::GetFlag(FLAGS_max_waiters_per_resource);
  limits.max_waiters_total = absl::GetFlag(FLAGS_max_waiters_total);
  limits.max_holders_per_resource = absl::GetFlag(FLAGS_max_holders_per_resource);
  limits.max_multi_resources = absl::GetFlag(FLAGS_max_multi_resources);
  limits.max_resources = absl::GetFlag(FLAGS_max_resources);
  limits.lock_delay = absl::GetFlag(FLAGS_lock_delay);
  limits.max_hold = absl::GetFlag(FLAGS_max_hold);
  limits.max_batch = absl::GetFlag(FLAGS_max_batch);
  limits.max_pending = absl::GetFlag(FLAGS_max_pending);
  limits.waiter_reattach_grace = absl::GetFlag(FLAGS_waiter_reattach_grace);
  options.session_limits.max_in_flight = absl::GetFlag(FLAGS_max_stream_in_flight);
  options.max_sessions = absl::GetFlag(FLAGS_max_sessions);
  options.max_fence_watchers = absl::GetFlag(FLAGS_max_fence_watchers);

  absl::StatusOr<std::unique_ptr<fencegate::lockservice::LockServer>> server =
      fencegate::lockservice::LockServer::Start(options);
  if (!server.ok()) {
    fencegate::LogError("fencegate-lockservice failed to start: %s",
                        server.status().ToString());
    return EXIT_FAILURE;
  }
  const std::string store =
      options.store == "sqlite"
          ? absl::StrCat("sqlite db=", options.db_path)
          : absl::StrCat(options.store, " etcd_prefix=", options.etcd_prefix,
                         " etcd_session_ttl=", absl::FormatDuration(options.etcd_session_ttl),
                         " advertise=", options.advertise.empty() ? "(listen)" : options.advertise,
                         " etcd_transport=", options.etcd_tls.enabled() ? "TLS" : "plaintext");
  fencegate::LogInfo(
      "%s serving on port %d (listen=%s store=%s ttl=[%s, %s] "
      "max_wait=%s lock_delay=%s max_hold=%s max_waiters_per_resource=%d "
      "max_waiters_total=%d max_holders_per_resource=%d max_multi_resources=%d "
      "max_resources=%d max_batch=%d "
      "max_pending=%d max_stream_in_flight=%d "
      "max_sessions=%d max_fence_watchers=%d transport=%s signing=%s metrics=%s)",
      fencegate::VersionLine(), (*server)->port(), options.serving.listen, store,
      absl::FormatDuration(limits.min_ttl), absl::FormatDuration(limits.max_ttl),
      absl::FormatDuration(limits.max_wait), absl::FormatDuration(limits.lock_delay),
      absl::FormatDuration(limits.max_hold), limits.max_waiters_per_resource,
      limits.max_waiters_total, limits.max_holders_per_resource,
      limits.max_multi_resources, limits.max_resources, (*server)->max_batch(),
      limits.max_pending, options.session_limits.max_in_flight, options.max_sessions,
      options.max_fence_watchers, fencegate::DescribeTls(options.serving.tls),
      (*server)->DescribeSigning(), (*server)->DescribeMetrics());
  return fencegate::ServeUntilShutdownSignal("fencegate-lockservice", **server);
}
