// LibraryLoop: fencegate driven through its C++ client library
// (libfencegate-client), the code its users run, in the cheapest correct
// way the library offers: each client is a LockClient and a GatewayClient
// on connections of their own, and every operation is an asynchronous
// call (GatewayClient::WriteAsync; LockClient::AcquireAsync, then
// ReleaseAsync from its callback) on the servers' Session streams. The
// library's callbacks run on gRPC's threads; no thread per client.
//
//   FencedWrite  WriteAsync(lock's resource and token, key, value): one
//                call on the gateway's Session stream.
//   LockCycle    AcquireAsync (try-lock, a request id of its own as the
//                library gives every Acquire), and ReleaseAsync of the
//                grant: two calls on the lock service's Session stream.
//   AcquireWaiting  AcquireAsync waiting in the resource's FIFO queue until
//                the give-up time: the server answers when it grants.
//   Release      ReleaseAsync of the grant.
//
// Thread safety: as loop_driver.h; the library is thread-safe.
#ifndef FENCEGATE_BENCH_LOADGEN_LIBRARY_LOOP_H_
#define FENCEGATE_BENCH_LOADGEN_LIBRARY_LOOP_H_

#include <memory>
#include <string>
#include <vector>

#include "bench/loadgen/loop_driver.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::bench {

class LibraryLoop final : public LoopDriver {
 public:
  // Either target may be empty: no client of that server.
  LibraryLoop(std::string lock_target, std::string gateway_target, std::string holder);

  absl::Status Open(int clients) override;
  void Start(std::function<void(int)> kick) override;
  void Stop() override;
  void FencedWrite(int client, const HeldLock& lock, absl::string_view key,
                   absl::string_view value, Done done) override;
  void LockCycle(int client, const std::string& resource, absl::Duration ttl,
                 Done done) override;
  void AcquireWaiting(int client, const std::string& resource, absl::Duration ttl,
                      absl::Time give_up, AcquireDone done) override;
  void Release(int client, const HeldLock& lock, Done done) override;

 private:
  const std::string lock_target_;
  const std::string gateway_target_;
  const std::string holder_;
  std::vector<std::unique_ptr<client::LockClient>> locks_;
  std::vector<std::unique_ptr<client::GatewayClient>> gateways_;
  std::vector<std::string> holders_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_LIBRARY_LOOP_H_
