// FencegateDriver: fencegate over its own gRPC API, raw stubs (no client
// library) so the hot path is visible: one connection to the lock service,
// one to the gateway.
//
//   Acquire      LockService.Acquire(resource, holder, ttl_ms, wait_ms). A
//                wait parks the call in the server's FIFO queue (no polling).
//   Release      LockService.Release(resource, token): owner-checked.
//   FencedWrite  Gateway.Write(resource, token, key, value): the fence check
//                (token >= max token) and the write are one SQLite
//                transaction, acknowledged after its group commit (fsync).
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_

#include <memory>
#include <string>

#include "bench/loadgen/driver.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"

namespace fencegate::bench {

class FencegateDriver final : public Driver {
 public:
  // `holder` names this client to the lock service; unique per driver.
  FencegateDriver(std::string lock_target, std::string gateway_target,
                  std::string holder);

  absl::Status Open(absl::Duration session_ttl) override;
  absl::StatusOr<std::optional<HeldLock>> Acquire(
      const std::string& resource, const AcquireOptions& options) override;
  absl::Status Release(const HeldLock& lock) override;
  absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,
                           absl::string_view value) override;

 private:
  const std::string lock_target_;
  const std::string gateway_target_;
  const std::string holder_;
  std::unique_ptr<v1::LockService::Stub> locks_;
  std::unique_ptr<v1::Gateway::Stub> gateway_;
  // Reused between calls so the client allocates little per op.
  v1::AcquireRequest acquire_;
  v1::AcquireResponse acquired_;
  v1::ReleaseRequest release_;
  v1::ReleaseResponse released_;
  v1::WriteRequest write_;
  v1::WriteResponse written_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_
