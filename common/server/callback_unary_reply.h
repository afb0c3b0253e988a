// CallbackUnaryReply: a UnaryReply (cq_unary.h) on gRPC's callback API, the
// reactor a callback service returns for a unary call, so the code that
// answers a call is the same on either API. Run() makes one, runs the
// handler on it, and returns it to gRPC.
//
// Ownership: deleted once gRPC is done with the call (OnDone) and the
// handler has returned, whichever is later: an answer the handler sends
// at once, or a commit thread's, may bring OnDone before the handler
// returns from registering OnCancelled.
// Thread safety: Finish() from any thread, once; OnCancelled() from the
// handler; `cancel` runs on a gRPC thread, or on the handler's if the
// call was cancelled already.
#ifndef FENCEGATE_COMMON_SERVER_CALLBACK_UNARY_REPLY_H_
#define FENCEGATE_COMMON_SERVER_CALLBACK_UNARY_REPLY_H_

#include <atomic>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/grpc_status.h"
#include "common/server/cq_unary.h"
#include "grpcpp/support/server_callback.h"

namespace fencegate {

class CallbackUnaryReply final : public grpc::ServerUnaryReactor, public UnaryReply {
 public:
  // Runs `handle(reply)` on a new reply and returns it, for the callback
  // method to return.
  template <typename Handle>
  static grpc::ServerUnaryReactor* Run(Handle handle) {
    auto* reply = new CallbackUnaryReply();
    handle(static_cast<UnaryReply*>(reply));
    reply->Unref();  // the handler's
    return reply;
  }

  void Finish(const absl::Status& status) override {
    grpc::ServerUnaryReactor::Finish(ToGrpcStatus(status));
  }
  void OnCancelled(absl::AnyInvocable<void() &&> cancel) override {
    {
      absl::MutexLock lock(&mu_);
      if (!cancelled_) {
        cancel_ = std::move(cancel);
        return;
      }
    }
    std::move(cancel)();
  }

  void OnCancel() override {
    absl::AnyInvocable<void() &&> cancel;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      cancel = std::move(cancel_);
    }
    if (cancel != nullptr) std::move(cancel)();
  }
  void OnDone() override { Unref(); }

 private:
  CallbackUnaryReply() = default;
  ~CallbackUnaryReply() override = default;

  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  std::atomic<int> refs_{2};  // the handler's, gRPC's
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void() &&> cancel_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CALLBACK_UNARY_REPLY_H_
