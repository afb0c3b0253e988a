#include "tests/testing/raw_call.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"

namespace fencegate::testing {
namespace {

std::string Bytes(grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// Writes every request, then half-closes; reads until the server is done.
class RawStream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit RawStream(const std::vector<std::string>& requests) : requests_(requests) {}

  void Start() {
    StartRead(&in_);
    WriteNext();
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    reply_.responses.push_back(Bytes(in_));
    StartRead(&in_);
  }
  void OnDone(const grpc::Status& status) override {
    reply_.status = status;
    done_.Notify();
  }
  RawStreamReply Wait() {
    done_.WaitForNotification();  // the call's deadline bounds the wait
    return std::move(reply_);
  }

 private:
  void WriteNext() {
    if (next_ == requests_.size()) {
      StartWritesDone();
      return;
    }
    grpc::Slice slice(requests_[next_++]);
    out_ = grpc::ByteBuffer(&slice, 1);
    StartWrite(&out_);
  }

  const std::vector<std::string>& requests_;
  size_t next_ = 0;
  grpc::ByteBuffer in_, out_;
  RawStreamReply reply_;
  absl::Notification done_;
};

}  // namespace

RawReply RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& method, const std::string& request,
                      absl::Duration timeout) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1), response_buffer;
  absl::Notification done;
  RawReply reply;
  generic.UnaryCall(&ctx, method, grpc::StubOptions(), &request_buffer, &response_buffer,
                    [&](grpc::Status s) {
                      reply.status = std::move(s);
                      done.Notify();
                    });
  done.WaitForNotification();  // the call's deadline bounds the wait
  if (!reply.status.ok()) return reply;
  reply.response = Bytes(response_buffer);
  return reply;
}

RawStreamReply RawStreamingCall(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& method,
                                const std::vector<std::string>& requests,
                                absl::Duration timeout) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  RawStream stream(requests);
  generic.PrepareBidiStreamingCall(&ctx, method, grpc::StubOptions(), &stream);
  stream.Start();
  return stream.Wait();
}

}  // namespace fencegate::testing
