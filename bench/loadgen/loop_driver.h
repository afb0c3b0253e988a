// LoopDriver: a system driven by event-loop clients, the shape the fastest
// clients of each system take (issue 32): no thread per client; each
// client keeps one operation in flight, and starts the next one inside the
// completion callback of the last (a closed loop run by the system's own
// event thread or threads). Drivers: library_loop.h (fencegate through its
// C++ client library), redis_loop.h (hiredis' async API on libevent),
// echo_loop.h (gRPC's streaming echo: the floor of a Session call).
// Runner: loop_workloads.h.
//
// Thread safety: Open, Start and Stop from one thread. An operation's
// methods are called on the driver's event thread (from Start's kick or
// from a Done) or, for drivers whose clients are thread-safe, from any;
// a driver runs each `done` once, on its event thread, and never while
// the same client has another operation in flight.
#ifndef FENCEGATE_BENCH_LOADGEN_LOOP_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_LOOP_DRIVER_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/loadgen/driver.h"

namespace fencegate::bench {

class LoopDriver {
 public:
  // An operation's end: true when done, false for a try-lock refused (a
  // completed operation too), or why it failed.
  using Done = absl::AnyInvocable<void(absl::StatusOr<bool>)>;

  virtual ~LoopDriver() = default;

  // Connects `clients` clients, each on a connection of its own, before the
  // clock starts.
  virtual absl::Status Open(int clients) = 0;
  // Runs kick(c) once for every client, on the driver's event thread(s),
  // and returns at once.
  virtual void Start(std::function<void(int client)> kick) = 0;
  // Client `client` starts no more operations (called on the event thread,
  // from its last Done or kick).
  virtual void Finished(int client) {}
  // After every client finished: disconnects and joins the driver's
  // threads.
  virtual void Stop() = 0;

  // Writes `value` under (lock.resource, key), fenced by lock.token.
  virtual void FencedWrite(int client, const HeldLock& lock, absl::string_view key,
                           absl::string_view value, Done done) {
    done(absl::UnimplementedError("this system's loop driver has no fenced write"));
  }
  // A try-lock of `resource` (TTL `ttl`) and, if granted, its owner-checked
  // release: one operation.
  virtual void LockCycle(int client, const std::string& resource, absl::Duration ttl,
                         Done done) {
    done(absl::UnimplementedError("this system's loop driver has no lock cycle"));
  }
  // A waiting acquire of `resource` (exclusive, TTL `ttl`), given up at
  // `give_up`: the grant, or nullopt if none came by then. The hand-off's
  // first step; Release() its last.
  using AcquireDone = absl::AnyInvocable<void(absl::StatusOr<std::optional<HeldLock>>)>;
  virtual void AcquireWaiting(int client, const std::string& resource, absl::Duration ttl,
                              absl::Time give_up, AcquireDone done) {
    done(absl::UnimplementedError("this system's loop driver has no waiting acquire"));
  }
  // The owner-checked release of `lock`.
  virtual void Release(int client, const HeldLock& lock, Done done) {
    done(absl::UnimplementedError("this system's loop driver has no release"));
  }
  // One message of `bytes` bytes there and back (the echo only).
  virtual void Echo(int client, size_t bytes, Done done) {
    done(absl::UnimplementedError("this system's loop driver has no echo"));
  }
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_LOOP_DRIVER_H_
