#include "bench/loadgen/redis_loop.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <optional>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/loadgen/redis_driver.h"

namespace fencegate::bench {

struct RedisLoop::Client {
  const std::function<void(int)>* kick = nullptr;  // the loop's
  const std::string* release_sha = nullptr;        // the loop's
  const std::string* acquire_sha = nullptr;        // the loop's
  event_base* base = nullptr;                      // the loop's
  absl::Duration retry;                            // the loop's
  std::minstd_rand random;                         // the retries' jitter
  int index = 0;
  redisAsyncContext* context = nullptr;  // null once disconnected
  Done done;                             // the op in flight's
  AcquireDone acquired;                  // AcquireWaiting's, while it tries
  std::string resource;                  // AcquireWaiting's
  absl::Time give_up;                    // AcquireWaiting's
  std::string ttl_ms;                    // AcquireWaiting's
  uint64_t sequence = 0;                 // makes lock owners unique
  std::string lock_key;                  // LockCycle's, between its commands
  std::string owner;
  absl::Status ping;  // Open's PING: its answer

  // Runs the op's Done once (it may start the next op).
  void Answer(absl::StatusOr<bool> outcome) {
    Done answer = std::move(done);
    answer(std::move(outcome));
  }
  // Runs AcquireWaiting's done once.
  void Acquired(absl::StatusOr<std::optional<HeldLock>> outcome) {
    AcquireDone answer = std::move(acquired);
    answer(std::move(outcome));
  }
  // One attempt of AcquireWaiting (redis_loop.cc).
  void TryAcquire();
};

namespace {

using RedisClient = RedisLoop::Client;

absl::Status ReplyError(absl::string_view what, const redisAsyncContext* context,
                        const redisReply* reply) {
  if (reply == nullptr) {
    return absl::UnavailableError(
        absl::StrCat(what, ": no reply (",
                     context != nullptr ? context->errstr : "disconnected", ")"));
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(absl::StrCat(what, ": ", reply->str));
  }
  return absl::InternalError(absl::StrCat(what, ": unexpected reply type ", reply->type));
}

void OnPing(redisAsyncContext* context, void* reply, void* data) {
  auto* client = static_cast<RedisClient*>(data);
  const auto* r = static_cast<redisReply*>(reply);
  client->ping = r != nullptr && r->type == REDIS_REPLY_STATUS
                     ? absl::OkStatus()
                     : ReplyError("PING", context, r);
}

// An integer reply of 1 is done; any other integer is `refused` (ABORTED).
void AnswerOne(RedisClient* client, redisAsyncContext* context, void* reply,
               absl::string_view what, absl::string_view refused) {
  const auto* r = static_cast<redisReply*>(reply);
  if (r == nullptr || r->type != REDIS_REPLY_INTEGER) {
    return client->Answer(ReplyError(what, context, r));
  }
  if (r->integer != 1) return client->Answer(absl::AbortedError(refused));
  client->Answer(true);
}

void OnFencedSet(redisAsyncContext* context, void* reply, void* data) {
  AnswerOne(static_cast<RedisClient*>(data), context, reply, "EVALSHA(fenced set)",
            "fenced set: stale token (the fence holds a larger one)");
}

void OnRelease(redisAsyncContext* context, void* reply, void* data) {
  AnswerOne(static_cast<RedisClient*>(data), context, reply, "EVALSHA(release)",
            "release: the lock is no longer ours (it expired or another owner holds it)");
}

void OnSet(redisAsyncContext* context, void* reply, void* data) {
  auto* client = static_cast<RedisClient*>(data);
  const auto* r = static_cast<redisReply*>(reply);
  if (r != nullptr && r->type == REDIS_REPLY_NIL) return client->Answer(false);
  if (r == nullptr || r->type != REDIS_REPLY_STATUS) {
    return client->Answer(ReplyError("SET NX PX", context, r));
  }
  if (redisAsyncCommand(context, OnRelease, client, "EVALSHA %s 1 %s %s",
                        client->release_sha->c_str(), client->lock_key.c_str(),
                        client->owner.c_str()) != REDIS_OK) {
    client->Answer(
        absl::UnavailableError(absl::StrCat("EVALSHA(release): ", context->errstr)));
  }
}

void OnRetry(evutil_socket_t, short, void* data) {
  static_cast<RedisClient*>(data)->TryAcquire();
}

void OnAcquire(redisAsyncContext* context, void* reply, void* data) {
  auto* client = static_cast<RedisClient*>(data);
  const auto* r = static_cast<redisReply*>(reply);
  if (r == nullptr || r->type != REDIS_REPLY_INTEGER) {
    return client->Acquired(ReplyError("EVALSHA(acquire)", context, r));
  }
  if (r->integer != 0) {
    return client->Acquired(HeldLock{client->resource, static_cast<uint64_t>(r->integer),
                                     client->owner, LockMode::kExclusive});
  }
  // Held: try again after a pause, unless that is past the give-up time.
  const absl::Duration pause = RetryPause(client->retry, client->random);
  if (absl::Now() + pause >= client->give_up) return client->Acquired(std::nullopt);
  const timeval after = absl::ToTimeval(pause);
  event_base_once(client->base, -1, EV_TIMEOUT, OnRetry, client, &after);
}

void OnKick(evutil_socket_t, short, void* data) {
  auto* client = static_cast<RedisClient*>(data);
  (*client->kick)(client->index);
}

}  // namespace

void RedisLoop::Client::TryAcquire() {
  if (redisAsyncCommand(context, OnAcquire, this, "EVALSHA %s 2 %s %s %s %s",
                        acquire_sha->c_str(), lock_key.c_str(), RedisDriver::kTokenCounter,
                        owner.c_str(), ttl_ms.c_str()) != REDIS_OK) {
    Acquired(absl::UnavailableError(absl::StrCat("EVALSHA(acquire): ", context->errstr)));
  }
}

RedisLoop::RedisLoop(std::string target, std::string client_id, absl::Duration retry)
    : target_(std::move(target)), client_id_(std::move(client_id)), retry_(retry) {}

RedisLoop::~RedisLoop() {
  if (loop_.joinable()) loop_.join();
  for (auto& client : clients_) {
    // Its callbacks run now, with no reply.
    if (client->context != nullptr) redisAsyncFree(client->context);
    client->context = nullptr;
  }
  if (base_ != nullptr) event_base_free(base_);
}

absl::Status RedisLoop::Open(int clients) {
  {
    // The scripts, loaded as the thread-shaped driver loads them.
    RedisDriver setup(target_, absl::StrCat(client_id_, "-setup"), absl::Milliseconds(1));
    if (absl::Status opened = setup.Open(absl::Seconds(10)); !opened.ok()) return opened;
    acquire_sha_ = setup.acquire_sha();
    release_sha_ = setup.release_sha();
    fenced_set_sha_ = setup.fenced_set_sha();
    setup.Close();
  }
  std::vector<std::string> parts = absl::StrSplit(target_, ':');
  int port = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--target: '", target_, "' is not host:port"));
  }
  base_ = event_base_new();
  if (base_ == nullptr) return absl::InternalError("event_base_new failed");
  for (int c = 0; c < clients; ++c) {
    auto client = std::make_unique<Client>();
    client->kick = &kick_;
    client->release_sha = &release_sha_;
    client->acquire_sha = &acquire_sha_;
    client->base = base_;
    client->retry = retry_;
    client->random.seed(static_cast<std::minstd_rand::result_type>(c) + 1);
    client->index = c;
    client->context = redisAsyncConnect(parts[0].c_str(), port);
    if (client->context == nullptr || client->context->err) {
      return absl::UnavailableError(absl::StrCat(
          "redis ", target_, ": ",
          client->context != nullptr ? client->context->errstr : "out of memory"));
    }
    redisLibeventAttach(client->context, base_);
    client->ping = absl::DeadlineExceededError("PING: no answer in 10 s");
    redisAsyncCommand(client->context, OnPing, client.get(), "PING");
    clients_.push_back(std::move(client));
  }
  // Every connection up and answering before the clock starts.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  auto answered = [&] {
    for (auto& client : clients_) {
      if (absl::IsDeadlineExceeded(client->ping)) return false;
    }
    return true;
  };
  while (!answered() && absl::Now() < deadline) event_base_loop(base_, EVLOOP_ONCE);
  for (auto& client : clients_) {
    if (!client->ping.ok()) return client->ping;
  }
  return absl::OkStatus();
}

void RedisLoop::Start(std::function<void(int)> kick) {
  kick_ = std::move(kick);
  const timeval now{0, 0};
  for (auto& client : clients_) {
    event_base_once(base_, -1, EV_TIMEOUT, OnKick, client.get(), &now);
  }
  // Returns once every connection is gone (Finished) and no kick is left.
  loop_ = std::thread([this] { event_base_dispatch(base_); });
}

void RedisLoop::Finished(int client) {
  Client& c = *clients_[client];
  if (c.context == nullptr) return;
  redisAsyncDisconnect(c.context);  // hiredis frees it
  c.context = nullptr;
}

void RedisLoop::Stop() {
  if (loop_.joinable()) loop_.join();
}

void RedisLoop::FencedWrite(int client, const HeldLock& lock, absl::string_view key,
                            absl::string_view value, Done done) {
  Client& c = *clients_[client];
  c.done = std::move(done);
  const std::string fence_key = absl::StrCat("fence:", lock.resource);
  const std::string data_key = absl::StrCat("data:", lock.resource, ":", key);
  const std::string token = absl::StrCat(lock.token);
  if (redisAsyncCommand(c.context, OnFencedSet, &c, "EVALSHA %s 2 %s %s %s %b",
                        fenced_set_sha_.c_str(), fence_key.c_str(), data_key.c_str(),
                        token.c_str(), value.data(), value.size()) != REDIS_OK) {
    c.Answer(
        absl::UnavailableError(absl::StrCat("EVALSHA(fenced set): ", c.context->errstr)));
  }
}

void RedisLoop::LockCycle(int client, const std::string& resource, absl::Duration ttl,
                          Done done) {
  Client& c = *clients_[client];
  c.done = std::move(done);
  c.lock_key = absl::StrCat("lock:", resource);
  c.owner = absl::StrCat(client_id_, "-", client, "-", ++c.sequence);
  const std::string ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(ttl));
  if (redisAsyncCommand(c.context, OnSet, &c, "SET %s %s NX PX %s", c.lock_key.c_str(),
                        c.owner.c_str(), ttl_ms.c_str()) != REDIS_OK) {
    c.Answer(absl::UnavailableError(absl::StrCat("SET NX PX: ", c.context->errstr)));
  }
}

void RedisLoop::AcquireWaiting(int client, const std::string& resource,
                               absl::Duration ttl, absl::Time give_up, AcquireDone done) {
  Client& c = *clients_[client];
  c.acquired = std::move(done);
  c.resource = resource;
  c.lock_key = absl::StrCat("lock:", resource);
  c.owner = absl::StrCat(client_id_, "-", client, "-", ++c.sequence);
  c.ttl_ms = absl::StrCat(absl::ToInt64Milliseconds(ttl));
  c.give_up = give_up;
  c.TryAcquire();
}

void RedisLoop::Release(int client, const HeldLock& lock, Done done) {
  Client& c = *clients_[client];
  c.done = std::move(done);
  const std::string lock_key = absl::StrCat("lock:", lock.resource);
  if (redisAsyncCommand(c.context, OnRelease, &c, "EVALSHA %s 1 %s %s", release_sha_.c_str(),
                        lock_key.c_str(), lock.owner.c_str()) != REDIS_OK) {
    c.Answer(absl::UnavailableError(absl::StrCat("EVALSHA(release): ", c.context->errstr)));
  }
}

}  // namespace fencegate::bench
