#include "bench/loadgen/redis_driver.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdarg>
#include <deque>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/loadgen/acquire_in_order.h"

namespace fencegate::bench {
namespace {

// KEYS[1] lock key, KEYS[2] token counter; ARGV[1] owner, ARGV[2] ttl ms.
constexpr char kAcquireScript[] = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
)lua";

// KEYS[1] lock key; ARGV[1] owner.
constexpr char kReleaseScript[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

// KEYS[1] fence key, KEYS[2] data key; ARGV[1] token, ARGV[2] value.
constexpr char kFencedSetScript[] = R"lua(
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if token < fence then
  return 0
end
if token > fence then
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], ARGV[2])
return 1
)lua";

// The read-write lock, written for this benchmark from the recipe of
// Redisson's RedissonReadWriteLock (RedissonReadLock / RedissonWriteLock):
// one hash per lock, field "mode" = read or write, one field per holder
// counting its holds (a writer's field is "<holder>:write"); each read hold
// has a timeout key of its own and the hash lives as long as the longest.

// KEYS[1] hash, KEYS[2] this holder's timeout key prefix; ARGV[1] ttl ms,
// ARGV[2] holder, ARGV[3] holder's write field. 1 = granted, 0 = not.
constexpr char kReadAcquireScript[] = R"lua(
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false then
  redis.call('HSET', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('SET', KEYS[2] .. ':1', 1, 'PX', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
if mode == 'read' or (mode == 'write' and redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1) then
  local holds = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('SET', KEYS[2] .. ':' .. holds, 1, 'PX', ARGV[1])
  local left = redis.call('PTTL', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], math.max(left, tonumber(ARGV[1])))
  return 1
end
return 0
)lua";

// KEYS[1] hash, KEYS[2] this holder's timeout key prefix, KEYS[3] the
// prefix of every holder's; ARGV[1] holder. 1 = released, 0 = not held.
constexpr char kReadReleaseScript[] = R"lua(
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local holds = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if holds == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('DEL', KEYS[2] .. ':' .. (holds + 1))
if redis.call('HLEN', KEYS[1]) > 1 then
  local longest = -3
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    local n = tonumber(redis.call('HGET', KEYS[1], field))
    if type(n) == 'number' then
      for i = n, 1, -1 do
        local left = redis.call('PTTL', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. i)
        longest = math.max(longest, left)
      end
    end
  end
  if longest > 0 then
    redis.call('PEXPIRE', KEYS[1], longest)
    return 1
  end
  if mode == 'write' then
    return 1
  end
end
redis.call('DEL', KEYS[1])
return 1
)lua";

// KEYS[1] hash, KEYS[2] token counter; ARGV[1] ttl ms, ARGV[2] the write
// field. The token (INCR'd, as the mutex's fenced acquire) or 0.
constexpr char kWriteAcquireScript[] = R"lua(
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false then
  redis.call('HSET', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return redis.call('INCR', KEYS[2])
end
if mode == 'write' and redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], redis.call('PTTL', KEYS[1]) + tonumber(ARGV[1]))
  return redis.call('INCR', KEYS[2])
end
return 0
)lua";

// KEYS[1] hash; ARGV[1] the write field, ARGV[2] ttl ms. 1 = released.
constexpr char kWriteReleaseScript[] = R"lua(
if redis.call('HGET', KEYS[1], 'mode') ~= 'write' or
    redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HLEN', KEYS[1]) == 1 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'mode', 'read')
end
return 1
)lua";

// The TTL a write release leaves on a write lock still held (re-entered);
// Redisson's is its lease time. No workload re-enters.
constexpr char kReentrantWriteTtlMs[] = "10000";

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Reply Command(redisContext* context, const char* format, ...) {
  va_list args;
  va_start(args, format);
  void* reply = redisvCommand(context, format, args);
  va_end(args);
  return Reply(static_cast<redisReply*>(reply));
}

}  // namespace

absl::Duration RetryPause(absl::Duration retry, std::minstd_rand& random) {
  std::uniform_int_distribution<int64_t> jitter(absl::ToInt64Microseconds(retry) / 2,
                                                absl::ToInt64Microseconds(retry) * 3 / 2);
  return absl::Microseconds(jitter(random));
}

RedisDriver::RedisDriver(std::string target, std::string client_id,
                         absl::Duration retry)
    : target_(std::move(target)),
      client_id_(std::move(client_id)),
      retry_(retry),
      random_(std::hash<std::string>()(client_id_)) {}

RedisDriver::~RedisDriver() { Close(); }

absl::Status RedisDriver::Open(absl::Duration /*session_ttl*/) {
  std::pair<std::string, std::string> host_port =
      absl::StrSplit(target_, absl::MaxSplits(':', 1));
  int port = 0;
  if (!absl::SimpleAtoi(host_port.second, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("redis target must be host:port, got '", target_, "'"));
  }
  const timeval timeout = {10, 0};
  context_ = redisConnectWithTimeout(host_port.first.c_str(), port, timeout);
  if (context_ == nullptr || context_->err != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot connect to redis at ", target_, ": ",
        context_ != nullptr ? context_->errstr : "out of memory"));
  }
  // Bounds every later command too.
  redisSetTimeout(context_, timeout);
  if (absl::Status s = LoadScript(kAcquireScript, &acquire_sha_); !s.ok()) return s;
  if (absl::Status s = LoadScript(kReleaseScript, &release_sha_); !s.ok()) return s;
  if (absl::Status s = LoadScript(kReadAcquireScript, &read_acquire_sha_); !s.ok())
    return s;
  if (absl::Status s = LoadScript(kReadReleaseScript, &read_release_sha_); !s.ok())
    return s;
  if (absl::Status s = LoadScript(kWriteAcquireScript, &write_acquire_sha_); !s.ok())
    return s;
  if (absl::Status s = LoadScript(kWriteReleaseScript, &write_release_sha_); !s.ok()) {
    return s;
  }
  return LoadScript(kFencedSetScript, &fenced_set_sha_);
}

void RedisDriver::Close() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

absl::Status RedisDriver::LoadScript(const char* script, std::string* sha) {
  Reply reply = Command(context_, "SCRIPT LOAD %s", script);
  if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
    return ReplyError("SCRIPT LOAD", reply.get());
  }
  sha->assign(reply->str, reply->len);
  return absl::OkStatus();
}

absl::Status RedisDriver::ReplyError(absl::string_view what,
                                     const redisReply* reply) const {
  if (reply == nullptr) {
    return absl::UnavailableError(absl::StrCat(what, ": ", context_->errstr));
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(absl::StrCat(what, ": ", std::string(reply->str, reply->len)));
  }
  return absl::InternalError(absl::StrCat(what, ": unexpected reply type ", reply->type));
}

absl::StatusOr<std::optional<uint64_t>> RedisDriver::TryAcquire(
    const std::string& resource, const std::string& owner,
    const AcquireOptions& options) {
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options.ttl));
  const std::string write_field = absl::StrCat(owner, ":write");
  if (options.mode == LockMode::kShared) {
    const std::string hash = absl::StrCat("rwlock:", resource);
    const std::string timeouts = absl::StrCat("{", hash, "}:", owner, ":rwlock_timeout");
    Reply reply = Command(context_, "EVALSHA %s 2 %s %s %s %s %s",
                          read_acquire_sha_.c_str(), hash.c_str(), timeouts.c_str(),
                          ttl_ms.c_str(), owner.c_str(), write_field.c_str());
    if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
      return ReplyError("EVALSHA(read acquire)", reply.get());
    }
    if (reply->integer == 0) return std::nullopt;
    return 0;
  }
  if (options.mode == LockMode::kWrite) {
    const std::string hash = absl::StrCat("rwlock:", resource);
    Reply reply =
        Command(context_, "EVALSHA %s 2 %s %s %s %s", write_acquire_sha_.c_str(),
                hash.c_str(), kTokenCounter, ttl_ms.c_str(), write_field.c_str());
    if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
      return ReplyError("EVALSHA(write acquire)", reply.get());
    }
    if (reply->integer == 0) return std::nullopt;
    return static_cast<uint64_t>(reply->integer);
  }
  const std::string lock_key = absl::StrCat("lock:", resource);
  if (options.need_token) {
    Reply reply = Command(context_, "EVALSHA %s 2 %s %s %s %s", acquire_sha_.c_str(),
                          lock_key.c_str(), kTokenCounter, owner.c_str(), ttl_ms.c_str());
    if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
      return ReplyError("EVALSHA(acquire)", reply.get());
    }
    if (reply->integer == 0) return std::nullopt;
    return static_cast<uint64_t>(reply->integer);
  }
  Reply reply = Command(context_, "SET %s %s NX PX %s", lock_key.c_str(), owner.c_str(),
                        ttl_ms.c_str());
  if (reply == nullptr ||
      (reply->type != REDIS_REPLY_STATUS && reply->type != REDIS_REPLY_NIL)) {
    return ReplyError("SET NX PX", reply.get());
  }
  if (reply->type == REDIS_REPLY_NIL) return std::nullopt;
  return 0;
}

absl::StatusOr<std::optional<HeldLock>> RedisDriver::Acquire(
    const std::string& resource, const AcquireOptions& options) {
  // The mutex's owner is new per lock; the read-write lock's holder is the
  // client (Redisson's "<uuid>:<thread id>"), whose holds it counts.
  std::string owner = options.mode == LockMode::kExclusive
                          ? absl::StrCat(client_id_, "-", ++sequence_)
                          : client_id_;
  while (true) {
    absl::StatusOr<std::optional<uint64_t>> token = TryAcquire(resource, owner, options);
    if (!token.ok()) return token.status();
    if (token->has_value())
      return HeldLock{resource, **token, std::move(owner), options.mode};
    if (!options.wait) return std::nullopt;
    const absl::Duration pause = RetryPause(retry_, random_);
    if (absl::Now() + pause >= options.give_up) return std::nullopt;
    std::this_thread::sleep_for(absl::ToChronoMicroseconds(pause));
  }
}

absl::StatusOr<std::optional<std::vector<HeldLock>>> RedisDriver::AcquireMany(
    const std::vector<std::string>& resources, const AcquireOptions& options) {
  return AcquireEachInOrder(*this, resources, options);
}

absl::Status RedisDriver::Release(const HeldLock& lock) {
  Reply reply;
  if (lock.mode == LockMode::kShared) {
    const std::string hash = absl::StrCat("rwlock:", lock.resource);
    const std::string all = absl::StrCat("{", hash, "}");
    const std::string timeouts = absl::StrCat(all, ":", lock.owner, ":rwlock_timeout");
    reply = Command(context_, "EVALSHA %s 3 %s %s %s %s", read_release_sha_.c_str(),
                    hash.c_str(), timeouts.c_str(), all.c_str(), lock.owner.c_str());
  } else if (lock.mode == LockMode::kWrite) {
    const std::string hash = absl::StrCat("rwlock:", lock.resource);
    const std::string write_field = absl::StrCat(lock.owner, ":write");
    reply = Command(context_, "EVALSHA %s 1 %s %s %s", write_release_sha_.c_str(),
                    hash.c_str(), write_field.c_str(), kReentrantWriteTtlMs);
  } else {
    const std::string lock_key = absl::StrCat("lock:", lock.resource);
    reply = Command(context_, "EVALSHA %s 1 %s %s", release_sha_.c_str(),
                    lock_key.c_str(), lock.owner.c_str());
  }
  if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
    return ReplyError("EVALSHA(release)", reply.get());
  }
  if (reply->integer != 1) return absl::AbortedError("release: lock no longer ours");
  return absl::OkStatus();
}

absl::Status RedisDriver::FencedWrite(const HeldLock& lock, absl::string_view key,
                                      absl::string_view value) {
  const std::string fence_key = absl::StrCat("fence:", lock.resource);
  const std::string data_key = absl::StrCat("data:", lock.resource, ":", key);
  const std::string token = absl::StrCat(lock.token);
  Reply reply = Command(context_, "EVALSHA %s 2 %s %s %s %b", fenced_set_sha_.c_str(),
                        fence_key.c_str(), data_key.c_str(), token.c_str(),
                        value.data(), value.size());
  return FencedWriteOutcome(reply.get());
}

absl::Status RedisDriver::FencedWriteOutcome(const redisReply* reply) const {
  if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
    return ReplyError("EVALSHA(fenced set)", reply);
  }
  if (reply->integer != 1) return absl::AbortedError("fenced set: stale token");
  return absl::OkStatus();
}

absl::Status RedisDriver::AppendFencedWrite(const HeldLock& lock, absl::string_view key,
                                            absl::string_view value) {
  const std::string fence_key = absl::StrCat("fence:", lock.resource);
  const std::string data_key = absl::StrCat("data:", lock.resource, ":", key);
  const std::string token = absl::StrCat(lock.token);
  if (redisAppendCommand(context_, "EVALSHA %s 2 %s %s %s %b", fenced_set_sha_.c_str(),
                         fence_key.c_str(), data_key.c_str(), token.c_str(), value.data(),
                         value.size()) != REDIS_OK) {
    return absl::UnavailableError(absl::StrCat("EVALSHA(fenced set): ", context_->errstr));
  }
  return absl::OkStatus();
}

absl::Status RedisDriver::PipelinedWrites(LockOf lock_of, absl::string_view key,
                                          absl::string_view value, int depth,
                                          absl::Time end, uint64_t count,
                                          PipelineDone done) {
  // Replies come in command order: the sends of the writes in flight, oldest
  // first.
  std::deque<std::pair<uint64_t, absl::Time>> in_flight;
  uint64_t k = 0;
  for (; k < static_cast<uint64_t>(depth) && k < count; ++k) {
    if (absl::Status s = AppendFencedWrite(lock_of(k), key, value); !s.ok()) return s;
    in_flight.emplace_back(k, absl::Now());
  }
  while (!in_flight.empty()) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK) {
      return absl::UnavailableError(absl::StrCat("redis pipeline: ", context_->errstr));
    }
    Reply reply(static_cast<redisReply*>(raw));
    done(in_flight.front().first, in_flight.front().second, FencedWriteOutcome(reply.get()));
    in_flight.pop_front();
    const absl::Time now = absl::Now();
    if (now < end && k < count) {
      if (absl::Status s = AppendFencedWrite(lock_of(k), key, value); !s.ok()) return s;
      in_flight.emplace_back(k++, now);
    }
  }
  return absl::OkStatus();
}

}  // namespace fencegate::bench
