// FenceFollower: grant-time fencing, the gateway's side. It follows a lock
// service's WatchFences stream (lock.proto) and raises each resource's fence
// in the FencedStore as positions arrive: to a new holder's token as soon as
// it is granted, to an expiry mark as soon as a lease expires. So a holder
// whose lease expired is refused before its successor, or anyone, has
// touched the gateway.
//
// Safety when the stream breaks: the follower remembers the largest position
// whose fences are committed (applied_position) and reconnects from it with
// backoff; the lock service then replays every position above it before
// going live (catch-up), so no grant or expiry is missed, also across a lock
// service restart. Fences only ever go up (RaiseFence). A message's events
// join the store's group commit together; the next message is read only
// once they committed, so the follower adds no fsync per event and never
// runs ahead of its own commits. Until it has caught up, the gateway still
// has plain fencing (a holder's first write or Fence raises the fence).
//
// A position the store cannot apply because the resource's name is beyond
// this gateway's limits is skipped: such a resource can never be written
// here. Storage errors drop the stream and retry from applied_position.
//
// Identity: it calls the lock service as the gateway itself (its
// --lockservice_tls_cert), so a lock service with a policy (--policy) must
// grant that subject describe on every resource; a refused stream
// (PERMISSION_DENIED) is retried like any other, and grant-time fencing
// stays off meanwhile (docs/security.md, "Authorization").
//
// Thread safety: thread-safe. One thread of its own runs the stream.
// Lifetime: `store` must outlive the follower; the destructor stops the
// thread (cancelling the stream) and waits for it.
#ifndef FENCEGATE_GATEWAY_FENCE_FOLLOWER_H_
#define FENCEGATE_GATEWAY_FENCE_FOLLOWER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/base/monotonic_wait.h"
#include "common/server/stuck_channel.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gateway/fenced_store.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::gateway {

struct FenceFollowerOptions {
  std::string lockservice;  // host:port of the lock service
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // null: plaintext
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
};

class FenceFollower {
 public:
  FenceFollower(FencedStore* store, FenceFollowerOptions options);
  ~FenceFollower();
  FenceFollower(const FenceFollower&) = delete;
  FenceFollower& operator=(const FenceFollower&) = delete;

  // Every position up to this one has its fence committed.
  uint64_t applied_position();
  // The current stream has replayed everything and is live.
  bool caught_up();

  // The follower's state, for the metrics and the status page.
  struct Stats {
    bool caught_up = false;
    uint64_t applied_position = 0;
    // The lock service's latest position, as its last message said
    // (WatchFencesResponse.head_position); at least applied_position.
    uint64_t head_position = 0;
    // Since the last message with events (or since the follower started).
    absl::Duration since_last_event;
    uint64_t streams_ended = 0;  // streams that broke or ended (reconnects)
  };
  Stats stats();

 private:
  void Run();
  // Follows one stream until it ends; returns how it ended.
  grpc::Status FollowOnce();
  // Raises the fences of one message's events and waits for their commits.
  // False if any failed (the stream is then restarted).
  bool Apply(const fencegate::v1::WatchFencesResponse& message);
  // Waits `d` or until stopping; false when stopping.
  bool Backoff(absl::Duration d);
  // A new channel (and stub) to the lock service.
  void Connect();

  FencedStore* const store_;
  const FenceFollowerOptions options_;
  grpc::ChannelArguments args_;
  // The follower's thread only (and the constructor, before it starts):
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<fencegate::v1::LockService::Stub> stub_;
  StuckChannelWatch channel_watch_;

  absl::Mutex mu_;
  MonotonicWait wake_;  // stopping_ changed
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;  // stream in flight
  uint64_t applied_position_ ABSL_GUARDED_BY(mu_) = 0;
  bool caught_up_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t head_position_ ABSL_GUARDED_BY(mu_) = 0;
  std::chrono::steady_clock::time_point last_event_ ABSL_GUARDED_BY(mu_) =
      std::chrono::steady_clock::now();
  uint64_t streams_ended_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread thread_;  // last: started once everything above is set
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_FENCE_FOLLOWER_H_
