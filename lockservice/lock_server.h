// LockServer: a running fencegate-lockservice (store, clock, manager, fence
// feed, optional token signer, gRPC server with health and reflection).
// main() and the integration tests both start it through Start().
//
// Thread safety: Start() and Shutdown() from one thread; Shutdown() is
// idempotent. ReloadSigningKeys() may be called from any thread.
#ifndef FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_
#define FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/tls.h"
#include "common/token_signer.h"
#include "lockservice/fence_feed.h"
#include "grpcpp/server.h"
#include "lockservice/lock_limits.h"
#include "lockservice/lock_manager.h"
#include "lockservice/lock_service.h"
#include "lockservice/sqlite_lock_store.h"

namespace fencegate::lockservice {

struct LockServerOptions {
  // host:port; port 0 picks a free port (see port() and port_file).
  std::string listen = "127.0.0.1:7070";
  // SQLite database file; created if missing.
  std::string db_path = "fencegate-locks.db";
  // If set, the bound port is written here once the server is serving.
  std::string port_file;
  // How long Shutdown() lets calls in flight finish before cancelling them.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // Key file (common/signing_keys.h); set = every grant is signed, and
  // Renew/Release must carry the signature.
  std::string signing_keys_path;
  ServerTlsFiles tls;
  LockLimits limits;
};

class LockServer {
 public:
  static absl::StatusOr<std::unique_ptr<LockServer>> Start(
      const LockServerOptions& options);
  ~LockServer();  // calls Shutdown()

  int port() const { return port_; }
  // "k1 (sign), k2", or "off".
  std::string DescribeSigning() const;

  // Re-reads the key file (on SIGHUP). On error the keys in use stay and
  // the error is returned; without signing, FAILED_PRECONDITION.
  absl::Status ReloadSigningKeys();

  // Stops taking calls, ends parked Acquires with UNAVAILABLE, lets calls in
  // flight finish (up to shutdown_grace), delivers committed replies.
  void Shutdown();

 private:
  LockServer() = default;

  int port_ = 0;
  std::string signing_keys_path_;
  std::unique_ptr<Clock> clock_;
  std::unique_ptr<SqliteLockStore> store_;
  FenceFeed feed_;
  std::unique_ptr<TokenSigner> signer_;  // null: no signing
  std::unique_ptr<LockManager> manager_;
  std::unique_ptr<LockServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  absl::Duration shutdown_grace_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_LOCK_SERVER_H_
