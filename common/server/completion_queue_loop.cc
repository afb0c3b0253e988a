#include "common/server/completion_queue_loop.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include "grpc/support/time.h"

namespace fencegate {
namespace {

// The running burst's deferred work; null outside a burst.
thread_local std::vector<absl::AnyInvocable<void()&&>>* after_burst = nullptr;

// A burst held open waits this long for an event before asking again.
gpr_timespec MillisecondFromNow() {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                      gpr_time_from_millis(1, GPR_TIMESPAN));
}

}  // namespace

bool RunAfterBurst(absl::AnyInvocable<void() &&> work) {
  if (after_burst == nullptr) return false;
  after_burst->push_back(std::move(work));
  return true;
}

void RunCompletionQueueLoop(grpc::CompletionQueue& cq, BurstHooks* hooks,
                            const CompletionQueueLoopOptions& options) {
  void* tag = nullptr;
  bool ok = false;
  bool in_burst = false;
  size_t events = 0;
  int empty_polls = 0;  // in a row, in this burst
  std::vector<absl::AnyInvocable<void() &&>> deferred;
  for (;;) {
    // Within a burst, take what is ready without blocking; at its end,
    // close it before blocking for the next event.
    if (in_burst) {
      grpc::CompletionQueue::NextStatus next = grpc::CompletionQueue::TIMEOUT;
      if (events < options.max_burst_events) {
        next = cq.AsyncNext(&tag, &ok, gpr_inf_past(GPR_CLOCK_MONOTONIC));
      }
      if (next == grpc::CompletionQueue::GOT_EVENT) {
        ++events;
        empty_polls = 0;
        static_cast<CompletionQueueEvent*>(tag)->On(ok);
        continue;
      }
      // One empty poll is not the end: gRPC completes the operations a
      // poll finds (the messages it read off the sockets) only as that
      // call returns, so they are in the queue for the next call. Without
      // this second look, messages that arrived together (during a long
      // commit) would trickle in one burst, one commit, each.
      if (next == grpc::CompletionQueue::TIMEOUT && events < options.max_burst_events) {
        if (++empty_polls < 2) continue;
        if (hooks->HeldOpen()) {  // the torture's test builds only
          if (cq.AsyncNext(&tag, &ok, MillisecondFromNow()) ==
              grpc::CompletionQueue::GOT_EVENT) {
            ++events;
            static_cast<CompletionQueueEvent*>(tag)->On(ok);
          }
          continue;
        }
      }
      in_burst = false;
      hooks->End();
      after_burst = nullptr;
      for (auto& work : deferred) std::move(work)();
      deferred.clear();
      if (next == grpc::CompletionQueue::SHUTDOWN) return;
    }
    if (!cq.Next(&tag, &ok)) return;
    if (hooks != nullptr) {
      in_burst = true;
      events = 1;
      empty_polls = 0;
      after_burst = &deferred;
      hooks->Begin();
    }
    static_cast<CompletionQueueEvent*>(tag)->On(ok);
  }
}

CompletionQueueLoop::CompletionQueueLoop(std::unique_ptr<grpc::ServerCompletionQueue> cq,
                                         BurstHooks* hooks, const char* thread_name)
    : cq_(std::move(cq)) {
  thread_ = std::thread([this, hooks, thread_name] {
    pthread_setname_np(pthread_self(), thread_name);
    RunCompletionQueueLoop(*cq_, hooks);
  });
}

void CompletionQueueLoop::Stop() {
  if (!thread_.joinable()) return;
  cq_->Shutdown();
  thread_.join();
}

}  // namespace fencegate
