#include "bench/loadgen/library_loop.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/loadgen/grpc_util.h"

namespace fencegate::bench {

LibraryLoop::LibraryLoop(std::string lock_target, std::string gateway_target,
                         std::string holder)
    : lock_target_(std::move(lock_target)),
      gateway_target_(std::move(gateway_target)),
      holder_(std::move(holder)) {}

absl::Status LibraryLoop::Open(int clients) {
  client::ClientOptions options;  // both transports: the Session streams
  for (int c = 0; c < clients; ++c) {
    holders_.push_back(absl::StrCat(holder_, "-", c));
    if (!lock_target_.empty()) {
      auto channel = ConnectOwnChannel(lock_target_, kCallTimeout);
      if (!channel.ok()) return channel.status();
      locks_.push_back(std::make_unique<client::LockClient>(*channel, options));
    }
    if (!gateway_target_.empty()) {
      auto channel = ConnectOwnChannel(gateway_target_, kCallTimeout);
      if (!channel.ok()) return channel.status();
      gateways_.push_back(std::make_unique<client::GatewayClient>(*channel, options));
    }
  }
  return absl::OkStatus();
}

void LibraryLoop::Start(std::function<void(int)> kick) {
  // The clients are thread-safe: the first calls go from here, the rest
  // from the library's callbacks.
  for (size_t c = 0; c < holders_.size(); ++c) kick(static_cast<int>(c));
}

void LibraryLoop::Stop() {
  // Every client finished: nothing is in flight.
  gateways_.clear();
  locks_.clear();
}

void LibraryLoop::FencedWrite(int client, const HeldLock& lock, absl::string_view key,
                              absl::string_view value, Done done) {
  client::Fencing fencing;
  fencing.resource = lock.resource;
  fencing.token = lock.token;
  gateways_[client]->WriteAsync(
      fencing, client::Mutation{std::string(key), std::string(value), std::nullopt},
      [done = std::move(done)](absl::StatusOr<client::WriteResult> written) mutable {
        if (!written.ok()) return done(written.status());
        done(true);
      });
}

void LibraryLoop::LockCycle(int client, const std::string& resource, absl::Duration ttl,
                            Done done) {
  client::AcquireOptions options;
  options.ttl = ttl;
  client::LockClient* locks = locks_[client].get();
  locks->AcquireAsync(resource, holders_[client], options,
                      [locks, resource, done = std::move(done)](
                          absl::StatusOr<client::AcquireOutcome> granted) mutable {
                        if (!granted.ok()) return done(granted.status());
                        if (!granted->acquired) return done(false);
                        locks->ReleaseAsync(resource, granted->token,
                                            [done = std::move(done)](
                                                absl::StatusOr<uint32_t> left) mutable {
                                              if (!left.ok()) return done(left.status());
                                              done(true);
                                            });
                      });
}

void LibraryLoop::AcquireWaiting(int client, const std::string& resource,
                                 absl::Duration ttl, absl::Time give_up,
                                 AcquireDone done) {
  client::AcquireOptions options;
  options.ttl = ttl;
  options.wait = give_up - absl::Now();
  if (options.wait <= absl::ZeroDuration()) return done(std::nullopt);
  locks_[client]->AcquireAsync(
      resource, holders_[client], options,
      [resource, holder = holders_[client], done = std::move(done)](
          absl::StatusOr<client::AcquireOutcome> granted) mutable {
        if (!granted.ok()) return done(granted.status());
        if (!granted->acquired) return done(std::nullopt);
        done(HeldLock{resource, granted->token, holder, LockMode::kExclusive});
      });
}

void LibraryLoop::Release(int client, const HeldLock& lock, Done done) {
  locks_[client]->ReleaseAsync(lock.resource, lock.token,
                               [done = std::move(done)](absl::StatusOr<uint32_t> left) mutable {
                                 if (!left.ok()) return done(left.status());
                                 done(true);
                               });
}

}  // namespace fencegate::bench
