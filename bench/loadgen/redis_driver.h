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
#include <random>
#include <string>

#include "bench/loadgen/driver.h"

struct redisContext;
struct redisReply;

namespace fencegate::bench {

class RedisDriver final : public Driver {
 public:
  // `target` is host:port; `client_id` makes owner values unique.
  RedisDriver(std::string target, std::string client_id, absl::Duration retry);
  ~RedisDriver() override;

  absl::Status Open(absl::Duration session_ttl) override;
  void Close() override;
  absl::StatusOr<std::optional<HeldLock>> Acquire(
      const std::string& resource, const AcquireOptions& options) override;
  absl::Status Release(const HeldLock& lock) override;
  absl::Status FencedWrite(const HeldLock& lock, absl::string_view key,
                           absl::string_view value) override;
  absl::Status PipelinedWrites(LockOf lock_of, absl::string_view key,
                               absl::string_view value, int depth, absl::Time end,
                               uint64_t count, PipelineDone done) override;

 private:
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
  uint64_t sequence_ = 0;
  std::minstd_rand random_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_REDIS_DRIVER_H_
