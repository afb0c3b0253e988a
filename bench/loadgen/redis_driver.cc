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

constexpr char kTokenCounter[] = "fencegate-bench:token";

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

absl::StatusOr<std::optional<HeldLock>> RedisDriver::Acquire(
    const std::string& resource, const AcquireOptions& options) {
  const std::string lock_key = absl::StrCat("lock:", resource);
  std::string owner = absl::StrCat(client_id_, "-", ++sequence_);
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(options.ttl));
  std::uniform_int_distribution<int64_t> jitter(
      absl::ToInt64Microseconds(retry_) / 2, absl::ToInt64Microseconds(retry_) * 3 / 2);
  while (true) {
    uint64_t token = 0;
    bool acquired = false;
    if (options.need_token) {
      Reply reply = Command(context_, "EVALSHA %s 2 %s %s %s %s", acquire_sha_.c_str(),
                            lock_key.c_str(), kTokenCounter, owner.c_str(), ttl_ms.c_str());
      if (reply == nullptr || reply->type != REDIS_REPLY_INTEGER) {
        return ReplyError("EVALSHA(acquire)", reply.get());
      }
      token = static_cast<uint64_t>(reply->integer);
      acquired = token != 0;
    } else {
      Reply reply = Command(context_, "SET %s %s NX PX %s", lock_key.c_str(),
                            owner.c_str(), ttl_ms.c_str());
      if (reply == nullptr ||
          (reply->type != REDIS_REPLY_STATUS && reply->type != REDIS_REPLY_NIL)) {
        return ReplyError("SET NX PX", reply.get());
      }
      acquired = reply->type == REDIS_REPLY_STATUS;
    }
    if (acquired) return HeldLock{resource, token, std::move(owner)};
    if (!options.wait) return std::nullopt;
    const absl::Duration pause = absl::Microseconds(jitter(random_));
    if (absl::Now() + pause >= options.give_up) return std::nullopt;
    std::this_thread::sleep_for(absl::ToChronoMicroseconds(pause));
  }
}

absl::Status RedisDriver::Release(const HeldLock& lock) {
  const std::string lock_key = absl::StrCat("lock:", lock.resource);
  Reply reply = Command(context_, "EVALSHA %s 1 %s %s", release_sha_.c_str(),
                        lock_key.c_str(), lock.owner.c_str());
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
