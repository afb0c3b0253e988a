// fencegate-consumer: what a program of your own does with fencegate's
// client library. It takes a lease on a resource, writes through the
// gateway with the lease's fencing token, reads back, and releases; then it
// shows the fence at work: once a newer lease has written, a write with the
// old token is refused.
//
//   fencegate-consumer LOCKSERVICE_ADDRESS GATEWAY_ADDRESS [RESOURCE]
//
// Exit status 0 when all of that happened as described, 1 otherwise (with
// the reason on stderr).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"

namespace {

using fencegate::client::AcquireOptions;
using fencegate::client::GatewayClient;
using fencegate::client::Lease;
using fencegate::client::LockClient;

int Fail(const std::string& what, const absl::Status& status) {
  std::cerr << "fencegate-consumer: " << what << ": " << status << "\n";
  return EXIT_FAILURE;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr
        << "usage: fencegate-consumer LOCKSERVICE_ADDRESS GATEWAY_ADDRESS [RESOURCE]\n";
    return 2;
  }
  const std::string resource = argc == 4 ? argv[3] : "consumer-example";

  // Connect lazily; TLS would be ClientOptions::tls.
  absl::StatusOr<std::unique_ptr<LockClient>> locks = LockClient::Connect(argv[1]);
  if (!locks.ok()) return Fail("lock service", locks.status());
  absl::StatusOr<std::unique_ptr<GatewayClient>> gateway =
      GatewayClient::Connect(argv[2]);
  if (!gateway.ok()) return Fail("gateway", gateway.status());

  // A lease renews itself in the background until released or destroyed.
  AcquireOptions acquire;
  acquire.ttl = absl::Seconds(10);
  acquire.wait = absl::Seconds(5);  // queue for up to 5 s if someone holds it
  absl::StatusOr<std::unique_ptr<Lease>> lease =
      (*locks)->AcquireLease(resource, "fencegate-consumer", acquire);
  if (!lease.ok()) return Fail("acquire", lease.status());
  const uint64_t old_token = (*lease)->token();
  std::cout << "acquired " << resource << " with token " << old_token << "\n";

  // Every write carries the lease's token: the gateway refuses it if a
  // newer holder has been there.
  auto written = (*gateway)->Put(**lease, "greeting", "hello from the consumer");
  if (!written.ok()) return Fail("write", written.status());
  auto read = (*gateway)->Read(**lease, "greeting");
  if (!read.ok()) return Fail("read", read.status());
  std::cout << "wrote version " << written->version << ", read back \"" << read->value
            << "\"\n";
  const fencegate::client::Fencing old_fencing = fencegate::client::FencingOf(**lease);
  if (absl::Status released = (*lease)->Release(); !released.ok()) {
    return Fail("release", released);
  }
  std::cout << "released\n";

  // The fence: a newer lease writes, then the old token is stale.
  auto newer = (*locks)->AcquireLease(resource, "fencegate-consumer", acquire);
  if (!newer.ok()) return Fail("second acquire", newer.status());
  auto newer_write = (*gateway)->Put(**newer, "greeting", "hello from the newer holder");
  if (!newer_write.ok()) return Fail("newer write", newer_write.status());
  auto late = (*gateway)->Put(old_fencing, "greeting", "a late write");
  if (late.ok() || !fencegate::client::IsStaleToken(late.status())) {
    return Fail("a late write with token " + std::to_string(old_token) +
                    " should have been refused as stale",
                late.status());
  }
  std::cout << "late write with token " << old_token
            << " refused: the gateway holds token "
            << fencegate::client::CurrentToken(late.status()) << "\n";
  if (absl::Status released = (*newer)->Release(); !released.ok()) {
    return Fail("release", released);
  }
  return EXIT_SUCCESS;
}
