// Options shared by the client library's LockClient and GatewayClient, and
// the library's retry contract.
//
// Every call has a deadline, and UNAVAILABLE (a server down, restarting or
// failing over, or a commit that failed and applied nothing) is retried
// until that deadline, with jittered exponential backoff, reusing the
// call's request_id, so a retried Acquire or Release is applied once.
// Nothing else is retried: above all not ABORTED (stale token, lost lease,
// which means "take the lock again"), and not an attempt that ran out of
// time (DEADLINE_EXCEEDED: its outcome is unknown).
//
// A call's deadline is call_timeout after it starts, or one whole attempt
// if that is longer: rpc_timeout, plus the wait of a blocking Acquire. A
// Lease's renewals retry until the lease would lapse. Details and the
// reasons: docs/errors.md, "Client library: retries and deadlines".
//
// This header, like every one under fencegate/client/, is part of the
// installed client library (find_package(fencegate), pkg-config
// fencegate-client): it includes only Abseil, gRPC's public API and the
// other installed fencegate/ headers.
#ifndef FENCEGATE_CLIENT_CLIENT_OPTIONS_H_
#define FENCEGATE_CLIENT_CLIENT_OPTIONS_H_

#include <cstddef>

#include "absl/time/time.h"
#include "fencegate/client_tls_files.h"
#include "fencegate/clock.h"

namespace fencegate::client {

struct RetryPolicy {
  // At most this many attempts per call. 0: no cap, retry until the call's
  // deadline. 1: never retry (a caller that must see every attempt's own
  // outcome, such as a history recorder).
  int max_attempts = 0;
  // The pause before the second attempt; each later pause doubles, up to
  // max_backoff. Each pause lasts between half and all of its step, and
  // ends early when the channel that failed has connected again.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(1);
};

// How a client sends its calls.
enum class Transport {
  // One gRPC call per operation: simple, but each call costs a round of
  // the server's RPC machinery.
  kUnary,
  // One Session stream per client, shared by all its threads: many calls
  // in flight on one stream, committed together in the server's group
  // commits (docs/gateway.md and docs/semantics.md, "The Session stream").
  // A Lease on the lock service's stream hears at once when the service
  // ends it (lease.h).
  kStream,
};

struct ClientOptions {
  // Deadline of a whole call, all its attempts and pauses included: enough
  // to ride out a restart of a server (the lock service reopens its store
  // and restores its leases) or a failover of the lock service on etcd
  // (--etcd_session_ttl, 5 s by default, plus an election).
  absl::Duration call_timeout = absl::Seconds(15);
  // Deadline of one attempt; a blocking Acquire's attempt also gets what is
  // left of its wait.
  absl::Duration rpc_timeout = absl::Seconds(5);
  RetryPolicy retry;
  // TLS for Connect(): a CA to verify the server (TLS on), and a client
  // certificate for mutual TLS. All empty: plaintext.
  ClientTlsFiles tls;
  // GatewayClient's synchronous calls: on its Session stream, or unary.
  // Its asynchronous calls (PutAsync) are always on the stream. List and
  // Describe are always unary.
  Transport gateway_transport = Transport::kStream;
  // LockClient's calls (and so its Leases' renewals and releases): on the
  // lock service's Session stream, or unary.
  Transport lock_transport = Transport::kStream;
  // Calls in flight at once on one client's Session stream (a parked
  // Acquire holds its place while it waits); one past it waits for a
  // place. Keep it at or below the servers' --max_stream_in_flight (256 by
  // default).
  size_t max_stream_in_flight = 256;
  // The monotonic clock the clients measure deadlines and backoffs on
  // (never the wall clock: a jump neither stretches nor cuts a call). Not
  // owned; must outlive every client made with these options. Tests pass
  // a fake one.
  Clock* clock = &SteadyClock();
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_CLIENT_OPTIONS_H_
