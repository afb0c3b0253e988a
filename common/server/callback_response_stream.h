// CallbackResponseStream: a ResponseStream (response_stream.h) on gRPC's
// callback API, the reactor a callback service returns for a server
// stream. Make it, hand it to the producer, give it the producer's
// events with Bind(), then return it to gRPC: the producer may write or
// finish before Bind(), since gRPC runs no reaction before the reactor is
// returned.
//
// Ownership: deletes itself in OnDone(), after telling the events.
// Thread safety: gRPC's; see response_stream.h.
#ifndef FENCEGATE_COMMON_SERVER_CALLBACK_RESPONSE_STREAM_H_
#define FENCEGATE_COMMON_SERVER_CALLBACK_RESPONSE_STREAM_H_

#include "common/server/response_stream.h"
#include "grpcpp/support/server_callback.h"

namespace fencegate {

template <typename Response>
class CallbackResponseStream final : public grpc::ServerWriteReactor<Response>,
                                     public ResponseStream<Response> {
 public:
  // `events` may be null: the producer finished at once and wants no word.
  void Bind(ResponseStreamEvents* events) { events_ = events; }

  void StartWrite(const Response* message) override {
    grpc::ServerWriteReactor<Response>::StartWrite(message);
  }
  void Finish(const grpc::Status& status) override {
    grpc::ServerWriteReactor<Response>::Finish(status);
  }

  void OnWriteDone(bool ok) override {
    if (events_ != nullptr) events_->OnWriteDone(ok);
  }
  void OnCancel() override {
    if (events_ != nullptr) events_->OnCancel();
  }
  void OnDone() override {
    if (events_ != nullptr) events_->OnDone();
    delete this;
  }

 private:
  ResponseStreamEvents* events_ = nullptr;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CALLBACK_RESPONSE_STREAM_H_
