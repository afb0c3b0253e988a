// Options shared by the client library's LockClient and GatewayClient.
#ifndef FENCEGATE_CLIENT_CLIENT_OPTIONS_H_
#define FENCEGATE_CLIENT_CLIENT_OPTIONS_H_

#include "absl/time/time.h"
#include "common/tls.h"

namespace fencegate::client {

// Retries of UNAVAILABLE answers (server down, restarting, or a failed
// commit that applied nothing), with jittered exponential backoff. Nothing
// else is retried: above all not ABORTED (stale token, lost lease), which
// means "take the lock again".
struct RetryPolicy {
  int max_attempts = 5;
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(1);
};

struct ClientOptions {
  // Deadline of one attempt of a call that does not wait for a lock.
  absl::Duration rpc_timeout = absl::Seconds(5);
  RetryPolicy retry;
  // TLS for Connect(): a CA to verify the server (TLS on), and a client
  // certificate for mutual TLS. All empty: plaintext.
  ClientTlsFiles tls;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_CLIENT_OPTIONS_H_
