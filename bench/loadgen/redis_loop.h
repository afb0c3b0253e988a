// RedisLoop: Redis driven by event-loop clients, hiredis' asynchronous API
// on libevent (hiredis' own adapter): every client's connection on one
// event thread, as Redis' fastest clients run. The same commands as
// RedisDriver's (redis_driver.h), the scripts loaded by one of those:
//
//   FencedWrite  EVALSHA of the fenced set: if token >= fence:<r>, raise the
//                fence and SET data:<r>:<key>, else refuse.
//   LockCycle    SET lock:<r> <owner> NX PX ttl (the cheapest Redis lock,
//                as RedisDriver's lock_cycle), and if it was set, EVALSHA of
//                the compare-and-delete release, from the SET's callback.
//   AcquireWaiting  EVALSHA of the fenced acquire (SET NX PX, then INCR the
//                token), again after a pause of `retry` with jitter (half
//                to one and a half times) while it is held, as
//                RedisDriver's waiting Acquire (Redis has no queue of
//                waiters); a libevent timer, no thread asleep.
//   Release      EVALSHA of the compare-and-delete release.
//
// Thread safety: as loop_driver.h. The operations run on the event thread
// only (hiredis' async contexts are not thread-safe): Start() kicks the
// clients there.
#ifndef FENCEGATE_BENCH_LOADGEN_REDIS_LOOP_H_
#define FENCEGATE_BENCH_LOADGEN_REDIS_LOOP_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/loadgen/loop_driver.h"

struct event_base;
struct redisAsyncContext;

namespace fencegate::bench {

class RedisLoop final : public LoopDriver {
 public:
  // `target` is host:port; `client_id` makes owner values unique; `retry`
  // is a waiting acquire's pause between attempts (--redis_retry).
  RedisLoop(std::string target, std::string client_id, absl::Duration retry);
  ~RedisLoop() override;

  absl::Status Open(int clients) override;
  void Start(std::function<void(int)> kick) override;
  void Finished(int client) override;
  void Stop() override;
  void FencedWrite(int client, const HeldLock& lock, absl::string_view key,
                   absl::string_view value, Done done) override;
  void LockCycle(int client, const std::string& resource, absl::Duration ttl,
                 Done done) override;
  void AcquireWaiting(int client, const std::string& resource, absl::Duration ttl,
                      absl::Time give_up, AcquireDone done) override;
  void Release(int client, const HeldLock& lock, Done done) override;

  // One client: its connection and its op in flight (redis_loop.cc).
  struct Client;

 private:
  const std::string target_;
  const std::string client_id_;
  const absl::Duration retry_;
  std::string acquire_sha_;
  std::string release_sha_;
  std::string fenced_set_sha_;
  event_base* base_ = nullptr;
  std::vector<std::unique_ptr<Client>> clients_;
  std::function<void(int)> kick_;
  std::thread loop_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_REDIS_LOOP_H_
