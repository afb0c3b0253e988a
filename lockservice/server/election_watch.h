// ElectionWatch: one Observe stream (lock.proto; docs/semantics.md,
// "Elections"). It adds itself to the lock manager as the election's
// observer (elections.h), which tells it the election's state and then
// each change as it commits; it writes them in (term, seq) order, leaving
// out what the caller has seen (the request's after_term and after_seq,
// then each change it sent: NewToObserver in election_requests.h).
//
// Flow control: one message in flight at a time; changes queue meanwhile
// and go out together. An observer so slow that max_pending changes pile
// up is ended with RESOURCE_EXHAUSTED: it observes again from the last
// change it saw. When the manager stops (shutdown, a failed commit's
// rebuild, or the end of this instance's term on the etcd store) the
// stream ends with UNAVAILABLE.
//
// How many: a StreamQuota counts the open streams (null: unbounded); one
// started while it is full ends at once with its RESOURCE_EXHAUSTED.
//
// Thread safety: the stream's events (the server's loop, or gRPC's
// reaction threads) and the manager's commit drive it concurrently; its
// state is under one mutex, never held while calling into gRPC or the
// manager. Lifetime: the watch deletes itself in OnDone(); the stream's
// state is reference counted (the watch's reference and the manager's),
// and touches the ResponseStream only before Finish(), which OnDone()
// always follows.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_ELECTION_WATCH_H_
#define FENCEGATE_LOCKSERVICE_SERVER_ELECTION_WATCH_H_

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "common/core/stream_quota.h"
#include "common/server/response_stream.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::lockservice {

struct ElectionWatchLimits {
  size_t max_pending = 1000;  // queued changes before the cut-off
};

// Starts the watch for one call on `stream`, counted in `observers` (null:
// not counted); returns the stream's producer, or null when the quota is
// full (the stream then ended at once with RESOURCE_EXHAUSTED). The
// request is checked (unknown fields, authorization) by the caller;
// `observers` must outlive the stream.
ResponseStreamEvents* StartElectionWatch(
    const fencegate::v1::ObserveRequest& request, std::shared_ptr<LockManager> manager,
    StreamQuota* observers, ResponseStream<fencegate::v1::ObserveResponse>* stream,
    const ElectionWatchLimits& limits = ElectionWatchLimits());

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_ELECTION_WATCH_H_
