// Driver: one client connection to one system under test, speaking that
// system's native protocol, with the three lock primitives every workload is
// built from (acquire, fenced write, release). Workloads (workloads.h) are
// written once against this interface, so each system runs exactly the same
// loop and only the protocol differs.
//
// What a primitive means on each system (and why it is the fair peer) is in
// the header of each implementation: fencegate_driver.h, etcd_driver.h,
// redis_driver.h, echo_driver.h.
//
// Every call blocks until answered (closed loop) and is bounded: waits stop
// at AcquireOptions::give_up, RPCs carry deadlines.
//
// Thread safety: none. One driver belongs to one client thread; each driver
// owns its own connection(s), never shared with another driver.
#ifndef FENCEGATE_BENCH_LOADGEN_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_DRIVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate::bench {

// Which lock an Acquire takes. kExclusive: the system's mutex (fencegate's
// EXCLUSIVE lease, etcd's concurrency.Mutex, Redis' SET NX PX). kShared and
// kWrite: the two sides of its read-write lock (fencegate: SHARED and
// EXCLUSIVE leases, so kWrite is kExclusive there; etcd: the RWMutex
// recipe's RLock and Lock; Redis: Redisson's read and write lock). A driver
// without a read-write lock answers kShared and kWrite with UNIMPLEMENTED.
enum class LockMode { kExclusive, kShared, kWrite };

// A lock held through a driver: what it needs to fence writes and release.
struct HeldLock {
  std::string resource;
  // The fencing token: fencegate's token, etcd's create revision of the lock
  // key, Redis' INCR'd counter. 0 when AcquireOptions::need_token was false.
  uint64_t token = 0;
  // etcd: the lock key (prefix/lease-id). Redis: the random owner value.
  std::string owner;
  LockMode mode = LockMode::kExclusive;  // as asked; Release needs it
};

struct AcquireOptions {
  LockMode mode = LockMode::kExclusive;
  absl::Duration ttl = absl::Seconds(10);
  // false: try-lock, answer at once. true: wait (queue, watch or spin, as the
  // system does it) until granted or `give_up`.
  bool wait = false;
  absl::Time give_up = absl::InfinitePast();
  // Redis only: false = plain SET NX PX with no token (its cheapest lock).
  bool need_token = true;
  // fencegate only: the Acquire's request id (empty: none). hold sends a
  // 32-hex-digit one, as the client library does with every Acquire, so
  // the memory per held lease counts the id the lease remembers.
  std::string request_id;
};

class Driver {
 public:
  virtual ~Driver() = default;

  // Connects and prepares per-connection state, not measured: etcd grants
  // its session lease here with `session_ttl`. Must be called first.
  virtual absl::Status Open(absl::Duration session_ttl) = 0;
  // Undoes Open (etcd: revokes the session lease). Best effort.
  virtual void Close() {}

  // nullopt: not acquired (held by another, or the wait ran out).
  virtual absl::StatusOr<std::optional<HeldLock>> Acquire(
      const std::string& resource, const AcquireOptions& options) = 0;
  // Several resources at once, all in `options.mode` (kExclusive or
  // kShared), all granted or none (nullopt, and nothing held): one lock per
  // resource, in the order given. fencegate: one Acquire naming them all
  // (AcquireRequest.resources). Peers without such a call take them one by
  // one in the order given (AcquireEachInOrder, acquire_in_order.h): callers
  // that may overlap pass them sorted. UNIMPLEMENTED where the driver has
  // neither.
  virtual absl::StatusOr<std::optional<std::vector<HeldLock>>> AcquireMany(
      const std::vector<std::string>& resources, const AcquireOptions& options) {
    return absl::UnimplementedError("this system's driver cannot acquire several locks");
  }
  // Owner-checked: a lock not held by `lock` any more is an error.
  virtual absl::Status Release(const HeldLock& lock) = 0;
  // Writes `value` under (lock.resource, key), accepted only if `lock` is
  // still the newest holder, checked atomically by the store.
  virtual absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,
                                   absl::string_view value) = 0;
  // The empty round trip (only the echo driver has it).
  virtual absl::Status EmptyCall() {
    return absl::UnimplementedError("this system has no empty call");
  }

  // The pipelined_write and fill workloads: keep `depth` fenced writes in
  // flight on this one connection, sending a new one as each answer comes,
  // until `end` or until `count` writes were sent (kUntilEnd: no count);
  // then take the last answers and return. Write k (0, 1, ...)
  // goes to lock_of(k) under `key`. `done(k, sent, outcome)` is called once
  // per write as its answer arrives (`sent`: when it was handed to the
  // connection). An error return means the connection failed; writes that
  // got no answer then got no `done` either. UNIMPLEMENTED where the
  // system's driver cannot pipeline.
  using LockOf = absl::FunctionRef<const HeldLock&(uint64_t k)>;
  using PipelineDone =
      absl::FunctionRef<void(uint64_t k, absl::Time sent, const absl::Status& outcome)>;
  static constexpr uint64_t kUntilEnd = ~uint64_t{0};
  virtual absl::Status PipelinedWrites(LockOf lock_of, absl::string_view key,
                                       absl::string_view value, int depth, absl::Time end,
                                       uint64_t count, PipelineDone done) {
    return absl::UnimplementedError("this system's driver cannot pipeline");
  }
};

// In the body of a driver of a lock system with all the calls (fencegate,
// Redis, etcd): declares the overrides of Open, Close, Acquire, AcquireMany,
// Release and FencedWrite; and of PipelinedWrites, for a driver that can
// pipeline.
#define FENCEGATE_BENCH_DRIVER_OVERRIDES                                        \
  absl::Status Open(absl::Duration session_ttl) override;                       \
  void Close() override;                                                        \
  absl::StatusOr<std::optional<HeldLock>> Acquire(                              \
      const std::string& resource, const AcquireOptions& options) override;     \
  absl::StatusOr<std::optional<std::vector<HeldLock>>> AcquireMany(             \
      const std::vector<std::string>& resources, const AcquireOptions& options) \
      override;                                                                 \
  absl::Status Release(const HeldLock& lock) override;                          \
  absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,         \
                           absl::string_view value) override;
#define FENCEGATE_BENCH_DRIVER_PIPELINED_WRITES_OVERRIDE                           \
  absl::Status PipelinedWrites(LockOf lock_of, absl::string_view key,              \
                               absl::string_view value, int depth, absl::Time end, \
                               uint64_t count, PipelineDone done) override;

// Makes the driver of client `index` (0-based). Called once per client
// thread and once per setup thread.
using DriverFactory =
    std::function<absl::StatusOr<std::unique_ptr<Driver>>(int index)>;

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_DRIVER_H_
