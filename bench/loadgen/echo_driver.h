// EchoDriver: an empty unary call to fencegate-echo-server (gRPC callback
// API, like fencegate's servers). No work behind it, so it is the ceiling a
// gRPC service can reach on this machine with this client: the other
// results are read as fractions of it. Has no lock primitives.
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_ECHO_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_ECHO_DRIVER_H_

#include <memory>
#include <string>

#include "bench/loadgen/driver.h"
#include "echo.grpc.pb.h"

namespace fencegate::bench {

class EchoDriver final : public Driver {
 public:
  explicit EchoDriver(std::string target) : target_(std::move(target)) {}

  absl::Status Open(absl::Duration session_ttl) override;
  absl::StatusOr<std::optional<HeldLock>> Acquire(
      const std::string& resource, const AcquireOptions& options) override;
  absl::Status Release(const HeldLock& lock) override;
  absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,
                           absl::string_view value) override;
  absl::Status EmptyCall() override;

 private:
  const std::string target_;
  std::unique_ptr<Echo::Stub> stub_;
  EchoMessage request_;
  EchoMessage response_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ECHO_DRIVER_H_
