// The run-to-completion event loop of a server on gRPC's asynchronous API:
// one thread takes every event of one completion queue (a call accepted, a
// message read, a write or a finish done) and runs it to its end, the way
// Redis' event loop runs each ready socket. Events that are ready together
// form a burst; when the queue has nothing more ready (two non-blocking
// polls in a row find nothing: what one poll reads off the sockets is in the
// queue only for the next call), before the thread blocks for the next
// event, the loop ends the burst (BurstHooks::End):
// where a server commits what the burst's messages queued and sends their
// answers, so one fsync acknowledges every call that arrived while the last
// one ran, and no other thread is woken for it.
//
// Why not gRPC's callback API (docs/benchmarks-analysis.md, "callback API
// or completion queue"): its queue is served by at least two threads that
// hand the poller back and forth, a context switch or more per message. A
// process that uses this loop must keep the callback API out altogether
// (gRPC's default health service included: health_service.h): one callback
// method brings that API's threads, which poll the same connections and
// wake this one. The synchronous API's pollers, idle (admin calls,
// reflection), were measured not to.
//
// Thread safety: RunCompletionQueueLoop runs on one thread, the only one
// that runs the handlers. Other threads may start operations whose events
// come back to it (gRPC's asynchronous calls may be started on any thread).
#ifndef FENCEGATE_COMMON_SERVER_COMPLETION_QUEUE_LOOP_H_
#define FENCEGATE_COMMON_SERVER_COMPLETION_QUEUE_LOOP_H_

#include <cstddef>
#include <memory>
#include <thread>

#include "absl/functional/any_invocable.h"
#include "grpcpp/completion_queue.h"

namespace fencegate {

// What a tag on the loop's queue points to: told of its event, on the
// loop's thread. `ok` is gRPC's: false for an operation that failed (the
// stream ended, the queue shuts down).
class CompletionQueueEvent {
 public:
  virtual void On(bool ok) = 0;

 protected:
  ~CompletionQueueEvent() = default;
};

// One of an object's operations on the queue (its accept, a read, a
// write, its finish, its done notice), as a tag: tells `owner` which one
// came back, through its private `On(Kind, bool ok)`, which makes this a
// friend. An object with several operations in flight holds one per kind.
template <typename Owner, typename Kind>
class OperationEvent final : public CompletionQueueEvent {
 public:
  OperationEvent(Kind kind, Owner* owner) : kind_(kind), owner_(owner) {}
  void On(bool ok) override { owner_->On(kind_, ok); }

 private:
  const Kind kind_;
  Owner* const owner_;
};

// Where a server hooks its batching onto the loop. Begin() runs before the
// first event of a burst, End() after its last, both on the loop's thread.
// End() may block on storage (it is the commit); nothing else in the loop
// should block.
class BurstHooks {
 public:
  virtual void Begin() = 0;
  virtual void End() = 0;
  // Asked when nothing more is ready, before End(): true holds the burst
  // open, the loop waiting for events a millisecond at a time and asking
  // again. No server holds one; the torture's test builds do, to commit
  // chosen messages together (the failpoint hold gateway.burst_end).
  virtual bool HeldOpen() { return false; }

 protected:
  ~BurstHooks() = default;
};

struct CompletionQueueLoopOptions {
  // A burst ends after this many events even if more are ready, so a
  // steady flow of events cannot hold a commit back for long.
  size_t max_burst_events = 256;
};

// On the loop's thread during a burst: runs `work` once the burst has
// ended (after BurstHooks::End()), and returns true. Elsewhere returns
// false and does nothing. Where a stream asks for its next message only
// after the burst's answers are on their way, so that gRPC's window update
// for the message read rides in the answer's packet instead of a packet of
// its own.
bool RunAfterBurst(absl::AnyInvocable<void() &&> work);

// Runs `cq`'s events on the calling thread until `cq` is shut down and
// drained. Every tag on `cq` must be a CompletionQueueEvent*. `hooks` may
// be null (no bursts).
void RunCompletionQueueLoop(grpc::CompletionQueue& cq, BurstHooks* hooks,
                            const CompletionQueueLoopOptions& options = {});

// A server's loop on a thread of its own: RunCompletionQueueLoop(cq, hooks)
// on a thread named `thread_name` (at most 15 characters: ps, top, perf).
class CompletionQueueLoop {
 public:
  // `cq` is the server's (ServerBuilder::AddCompletionQueue); `hooks` may be
  // null and must outlive the loop.
  CompletionQueueLoop(std::unique_ptr<grpc::ServerCompletionQueue> cq, BurstHooks* hooks,
                      const char* thread_name);
  ~CompletionQueueLoop() { Stop(); }
  CompletionQueueLoop(const CompletionQueueLoop&) = delete;
  CompletionQueueLoop& operator=(const CompletionQueueLoop&) = delete;

  grpc::ServerCompletionQueue* cq() { return cq_.get(); }
  // Shuts the queue down, lets the loop drain it, and joins its thread.
  // Call after the server's Shutdown() (gRPC's order). Idempotent.
  void Stop();

 private:
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::thread thread_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_COMPLETION_QUEUE_LOOP_H_
