// FenceFeed: where the lock service announces, after each commit, the fence
// positions it just made durable (see FencePosition in lock_store.h): a
// grant (fence to the new token) or an expiry (fence to the expiry mark).
// Grant-time fencing streams them to gateways (WatchFences in lock.proto),
// which raise their fences before the new holder, or anyone, writes.
//
// Ordering: LockManager publishes from the thread that commits (its writer
// thread, or a Session's: common/core/group_commit.h), one committed batch at a
// time, so a subscriber sees positions in increasing order. A
// subscriber added while a batch is being published may miss that batch,
// which is committed by then: a new subscriber first registers, then reads
// the committed positions from the store (ScanFencePositions), so together
// the two miss nothing.
//
// Thread safety: all methods are thread-safe. Subscribers are called with
// no lock of the feed held, from the committing thread (OnEvents) or the
// closing thread (OnClose); they must not block and may be called after
// they were removed (a publish already under way), so they must ignore
// calls they no longer want.
#ifndef FENCEGATE_LOCKSERVICE_CORE_FENCE_FEED_H_
#define FENCEGATE_LOCKSERVICE_CORE_FENCE_FEED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fencegate::lockservice {

struct FenceEvent {
  enum class Kind { kGranted, kExpired };
  Kind kind = Kind::kGranted;
  std::string resource;
  uint64_t token = 0;     // the lease's token
  uint64_t position = 0;  // granted: = token; expired: the expiry mark
};

class FenceFeed {
 public:
  class Subscriber {
   public:
    virtual ~Subscriber() = default;
    // A committed batch's events, in increasing position order.
    virtual void OnEvents(const std::vector<FenceEvent>& events) = 0;
    // The feed is closing (the server shuts down); no more events follow.
    virtual void OnClose() = 0;
  };

  void Subscribe(std::shared_ptr<Subscriber> subscriber);
  void Unsubscribe(const Subscriber* subscriber);
  // Called by LockManager after each successful commit with events.
  void Publish(const std::vector<FenceEvent>& events);
  // Calls OnClose() of every subscriber, drops them, refuses new ones (they
  // get OnClose() at once).
  void Close();

 private:
  std::vector<std::shared_ptr<Subscriber>> Snapshot();

  absl::Mutex mu_;
  std::vector<std::shared_ptr<Subscriber>> subscribers_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_FENCE_FEED_H_
