// FenceWatch: one WatchFences stream (lock.proto), the lock service's side of
// grant-time fencing. It registers with the FenceFeed first, then replays
// the committed positions above the caller's `after_position` from the
// store in pages (catch-up), sends caught_up, and from then on forwards each
// committed batch's events. Live events that arrive during the catch-up wait
// in a buffer and are sent after it, minus those the catch-up already
// covered, so positions on the stream only grow and nothing is missed
// (fence_feed.h explains why registering first is enough).
//
// Flow control: one message in flight at a time. Events queue meanwhile; a
// follower so slow that max_pending events pile up is cut off with
// RESOURCE_EXHAUSTED and catches up when it reconnects. When the feed closes
// (server shutdown) the stream ends with UNAVAILABLE.
//
// How many (--max_fence_watchers): a StreamQuota counts the open streams,
// each until it is done; a stream started while the quota is full ends at
// once with its RESOURCE_EXHAUSTED, without a subscription or a scan.
//
// Thread safety: the stream's events (the server's loop, or gRPC's
// reaction threads) and the lock manager's commit (through the feed) drive
// it concurrently; all state is under one mutex, never held while calling
// into gRPC or the store. A catch-up page is read from the store on the
// thread that asks for the next message (the loop's, on the loop).
// Lifetime: the watch deletes itself in OnDone(). The stream's state is
// shared with the feed, which may hold it a little longer; it touches the
// ResponseStream only before Finish(), which OnDone() always follows.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_FENCE_WATCH_H_
#define FENCEGATE_LOCKSERVICE_SERVER_FENCE_WATCH_H_

#include <cstddef>

#include "absl/status/status.h"
#include "common/core/stream_quota.h"
#include "common/server/response_stream.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::lockservice {

struct FenceWatchLimits {
  size_t catch_up_page = 1000;  // positions per catch-up message
  size_t max_message = 4096;    // events per live message
  size_t max_pending = 100000;  // queued events before the cut-off
};

// Starts the watch for one call on `stream`, counted in `watchers` (null:
// not counted, no bound); returns the stream's producer, or null when the
// quota is full (the stream then ended at once with RESOURCE_EXHAUSTED).
// `watchers`, `store` and `feed` must outlive the stream.
ResponseStreamEvents* StartFenceWatch(
    const fencegate::v1::WatchFencesRequest& request, LockStore* store, FenceFeed* feed,
    StreamQuota* watchers, ResponseStream<fencegate::v1::WatchFencesResponse>* stream,
    const FenceWatchLimits& limits = FenceWatchLimits());

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_FENCE_WATCH_H_
