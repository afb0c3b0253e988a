#include "common/server/grpc_shutdown.h"

#include <algorithm>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpc/grpc.h"

namespace fencegate {
namespace {

// Counts its call for as long as gRPC keeps it: created when the call is
// handed to the service, destroyed after its status went out.
class UnaryCallInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit UnaryCallInterceptor(UnaryCallCounter* counter) : counter_(counter) {
    counter_->Started();
  }
  ~UnaryCallInterceptor() override { counter_->Ended(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  UnaryCallCounter* const counter_;
};

class UnaryCallCounterFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit UnaryCallCounterFactory(UnaryCallCounter* counter) : counter_(counter) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
    return new UnaryCallInterceptor(counter_);
  }

 private:
  UnaryCallCounter* const counter_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
UnaryCallCounter::NewFactory() {
  return std::make_unique<UnaryCallCounterFactory>(this);
}

int UnaryCallCounter::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

bool UnaryCallCounter::AwaitNone(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&none), deadline);
}

void UnaryCallCounter::Started() {
  absl::MutexLock lock(&mu_);
  ++in_flight_;
}

void UnaryCallCounter::Ended() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

void ShutdownGrpcServer(grpc::Server& server, const UnaryCallCounter& calls,
                        absl::Time deadline, absl::Duration linger) {
  // Shutdown() stops taking calls at once, then waits for the calls in
  // flight and for every connection to close, idle ones included, until
  // the deadline. The unary calls are what is worth waiting for: once they
  // are done, cancel the rest, which also closes the idle connections, so
  // Shutdown() returns now.
  // Cancelling may come before the thread's Shutdown() began (a
  // connection made in between would hold it again), so it is repeated
  // until Shutdown() returns, which it does by the deadline in any case.
  // A unary call that arrives in that moment, after SIGTERM, is cancelled
  // rather than finished: its client sees it fail and retries elsewhere
  // or later (Acquire and Release with their request ids).
  absl::Notification done;
  std::thread shutdown([&server, &done, deadline] {
    server.Shutdown(absl::ToChronoTime(deadline));
    done.Notify();
  });
  calls.AwaitNone(deadline);
  // The linger (header comment): Shutdown() returns early if every client
  // closed its connection.
  done.WaitForNotificationWithDeadline(std::min(deadline, absl::Now() + linger));
  while (!done.HasBeenNotified()) {
    grpc_server_cancel_all_calls(server.c_server());
    done.WaitForNotificationWithTimeout(absl::Milliseconds(50));
  }
  shutdown.join();
}

}  // namespace fencegate
