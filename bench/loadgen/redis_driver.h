// RedisDriver: Redis over RESP with hiredis (synchronous, one connection).
// The recipes are the usual single-instance Redis ones:
//
//   Acquire      need_token = false (lock_cycle): SET lock:<r> <owner> NX PX
//                ttl, the cheapest Redis lock, with no fencing token.
//                need_token = true (fenced_write, handoff): one EVALSHA that
//                does the same SET NX PX and, if it won, INCRs a counter and
//                returns it as the fencing token (one round trip, atomic).
//                Waiting: Redis has no queue, so a waiter retries after a
//                jittered pause (--redis_retry, default 1 ms: far more eager
//                than redis-py's 100 ms or Redlock's 200 ms, which favours
//                Redis' hand-off rate).
//   Release      EVALSHA compare-and-delete: DEL only if the value is still
//                our owner value.
//   kShared, kWrite  Redisson's read-write lock (RedissonReadWriteLock), in
//                Lua scripts of our own written from its recipe: a hash
//                rwlock:<r> with a field "mode" (read / write) and a hold
//                count per holder (this client; the writer's field
//                "<client>:write"); every read hold has its own timeout key
//                and a read release sets the hash's TTL to the longest one
//                left (a scan of every reader's keys, as Redisson does). A
//                reader enters while the mode is read, even with writers
//                waiting: Redisson's lock is not fair, and writers can
//                starve. The write acquire also INCRs the token counter (a
//                fencing token, which Redisson has not); fenced writes as
//                below. Waiters poll as above (Redisson subscribes to an
//                unlock channel: no PUBLISH here, nobody listens); no
//                unlock latch (Redisson's retry-safe release).
//   AcquireMany  Redisson's RedissonMultiLock: each lock in turn, in the
//                order given, waiting on each; on a failure the ones taken
//                are released (acquire_in_order.h).
//   FencedWrite  EVALSHA: if token >= fence:<r> then raise the fence to the
//                token and SET data:<r>:<key>, else refuse; atomic in Redis.
//   PipelinedWrites  the same EVALSHA, `depth` of them in flight on the one
//                connection (hiredis pipelining: append `depth` commands,
//                then for each reply read, append the next one; hiredis
//                sends what is appended before it reads).
//
// Durability is the server's: appendfsync always (fsync before replying,
// batched per event-loop pass) or everysec (not durable: a crash loses up
// to a second of acknowledged writes).
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_REDIS_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_REDIS_DRIVER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/loadgen/driver.h"

struct redisContext;
struct redisReply;

namespace fencegate::bench {

// A waiting acquire's pause before its next try: `retry` with jitter, half
// to one and a half times (RedisDriver's and RedisLoop's waiting acquires).
absl::Duration RetryPause(absl::Duration retry, std::minstd_rand& random);

class RedisDriver final : public Driver {
 public:
  // `target` is host:port; `client_id` makes owner values unique.
  RedisDriver(std::string target, std::string client_id, absl::Duration retry);
  ~RedisDriver() override;

  FENCEGATE_BENCH_DRIVER_OVERRIDES
  FENCEGATE_BENCH_DRIVER_PIPELINED_WRITES_OVERRIDE

  // After Open(): the SHA1s of the loaded scripts the event-loop driver
  // sends too (redis_loop.h): the fenced acquire (SET NX PX, then INCR of
  // kTokenCounter), the release's compare-and-delete and the fenced set.
  const std::string& acquire_sha() const { return acquire_sha_; }
  const std::string& release_sha() const { return release_sha_; }
  const std::string& fenced_set_sha() const { return fenced_set_sha_; }
  // The key whose INCR is every fenced acquire's token.
  static constexpr char kTokenCounter[] = "fencegate-bench:token";

 private:
  // One attempt at the lock `options.mode` names: its token (0 where it has
  // none), or nullopt if held.
  absl::StatusOr<std::optional<uint64_t>> TryAcquire(const std::string& resource,
                                                     const std::string& owner,
                                                     const AcquireOptions& options);
  // Appends the fenced set of `value` under (lock, key) without sending it.
  absl::Status AppendFencedWrite(const HeldLock& lock, absl::string_view key,
                                 absl::string_view value);
  // The outcome of one fenced set's reply.
  absl::Status FencedWriteOutcome(const redisReply* reply) const;
  // Loads `script` into the server's cache; its SHA1 in *sha.
  absl::Status LoadScript(const char* script, std::string* sha);
  // The connection's error, or `what` with the reply's error text.
  absl::Status ReplyError(absl::string_view what, const redisReply* reply) const;

  const std::string target_;
  const std::string client_id_;
  const absl::Duration retry_;
  redisContext* context_ = nullptr;
  std::string acquire_sha_;
  std::string release_sha_;
  std::string fenced_set_sha_;
  std::string read_acquire_sha_;
  std::string read_release_sha_;
  std::string write_acquire_sha_;
  std::string write_release_sha_;
  uint64_t sequence_ = 0;
  std::minstd_rand random_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_REDIS_DRIVER_H_
