// FencegateDriver: fencegate over its own gRPC API, raw stubs (no client
// library) so the hot path is visible: one connection to the lock service,
// one to the gateway.
//
//   Acquire      kUnary: LockService.Acquire(resource, holder, ttl_ms,
//                wait_ms, mode). A wait parks the call in the server's FIFO
//                queue (no polling). kStream: the same AcquireRequest as one
//                call on the driver's Session stream to the lock service.
//                LockMode kShared asks for a SHARED lease; kExclusive and
//                kWrite for the EXCLUSIVE one (the same lease).
//   AcquireMany  one Acquire naming every resource (AcquireRequest.resources):
//                granted together or not at all, one lease (token) each.
//   Release      LockService.Release(resource, token): owner-checked; as
//                Acquire, unary or on the stream.
//   FencedWrite  kUnary: Gateway.Write(resource, token, key, value), one call
//                per write. kStream: the same WriteRequest as one call on the
//                driver's Session stream to the gateway (opened once, in
//                Open()), one message each way per write. Either way the
//                fence check (token >= max token) and the write are one
//                SQLite transaction, acknowledged after its group commit
//                (fsync).
//   PipelinedWrites (kStream only): `depth` calls in flight on the stream.
//                One thread: it reads a message of answers, then sends one
//                message with as many new calls as were answered, as a
//                pipelining Redis client reads a reply and appends a command.
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/loadgen/driver.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"

namespace fencegate::bench {

// How the driver calls both servers: one unary call per operation, or one
// Session stream per server for the driver's life.
enum class Transport { kUnary, kStream };

class FencegateDriver final : public Driver {
 public:
  // `holder` names this client to the lock service; unique per driver.
  // Either target may be empty (no calls to that server): the fill
  // workload writes to a gateway with no lock service.
  FencegateDriver(std::string lock_target, std::string gateway_target,
                  std::string holder, Transport transport);
  ~FencegateDriver() override;

  FENCEGATE_BENCH_DRIVER_OVERRIDES
  FENCEGATE_BENCH_DRIVER_PIPELINED_WRITES_OVERRIDE

 private:
  using Session = grpc::ClientReaderWriter<v1::GatewaySessionRequest,
                                           v1::GatewaySessionResponse>;
  using LockSession =
      grpc::ClientReaderWriter<v1::LockSessionRequest, v1::LockSessionResponse>;

  // The AcquireRequest of the next Acquire, cleared and filled but for its
  // resource(s): the stream's next call or the unary request.
  v1::AcquireRequest& NextAcquire(const AcquireOptions& options, int64_t wait_ms);
  // Sends that request (asked at `now`): its response, or the call's error.
  absl::StatusOr<const v1::AcquireResponse*> SendAcquire(absl::Time now, int64_t wait_ms);
  // Connects to the gateway (if it has a target) and opens its stream.
  absl::Status OpenGateway();
  // Fills `call` as the write of `value` under (lock.resource, key).
  static void SetWrite(v1::GatewayCall& call, uint64_t id, const HeldLock& lock,
                       absl::string_view key, absl::string_view value);
  // The stream's end, as an error (it ended while answers were due).
  absl::Status SessionEnded();
  absl::Status LockSessionEnded();
  // Sends lock_out_ (one call) on the lock Session stream and reads until
  // that call's answer (skipping pushed LeaseLost events): its response in
  // lock_in_.results(0)'s place, returned; or the call's or stream's error.
  absl::StatusOr<const v1::LockResult*> LockStreamCall();

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

  const Transport transport_;
  // kStream: the Session streams, for the whole life of the driver.
  std::unique_ptr<grpc::ClientContext> session_context_;
  std::unique_ptr<Session> session_;
  v1::GatewaySessionRequest out_;
  v1::GatewaySessionResponse in_;
  std::unique_ptr<grpc::ClientContext> lock_session_context_;
  std::unique_ptr<LockSession> lock_session_;
  v1::LockSessionRequest lock_out_;
  v1::LockSessionResponse lock_in_;
  uint64_t next_id_ = 1;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_FENCEGATE_DRIVER_H_
