// The completion-queue loop's unary methods and server streams
// (common/server/cq_unary.h, cq_write_stream.h) on a real server, with
// grpc.health.v1's two methods as the carrier: a unary call that waits
// learns that its client went away, and a server stream's producer is told
// of its writes, of its client's going, and of its end, once.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/cq_unary.h"
#include "common/server/cq_write_stream.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace fencegate {
namespace {

namespace health = ::grpc::health::v1;
using Request = health::HealthCheckRequest;
using Response = health::HealthCheckResponse;
using RawHealth = health::Health::WithRawMethod_Check<
    health::Health::WithRawMethod_Watch<health::Health::Service>>;

// What the producers were told, for the test to wait on.
struct Heard {
  absl::Mutex mu;
  int cancels ABSL_GUARDED_BY(mu) = 0;
  int dones ABSL_GUARDED_BY(mu) = 0;
  bool AnyDone() const ABSL_SHARED_LOCKS_REQUIRED(mu) { return dones > 0; }
};

// A Watch's producer: writes `count` messages, then finishes OK; told of a
// cancellation, finishes CANCELLED once no write is in flight. Every
// event runs on the loop's thread.
class Producer final : public ResponseStreamEvents {
 public:
  Producer(ResponseStream<Response>* stream, int count, Heard* heard)
      : stream_(stream), left_(count), heard_(heard) {
    Next();
  }
  void OnWriteDone(bool ok) override {
    writing_ = false;
    if (!ok) cancelled_ = true;
    Next();
  }
  void OnCancel() override {
    {
      absl::MutexLock lock(&heard_->mu);
      ++heard_->cancels;
    }
    cancelled_ = true;
    Next();
  }
  void OnDone() override {
    {
      absl::MutexLock lock(&heard_->mu);
      ++heard_->dones;
    }
    delete this;
  }

 private:
  void Next() {
    if (writing_ || finished_) return;
    if (cancelled_ || left_ == 0) {
      finished_ = true;
      stream_->Finish(cancelled_ ? grpc::Status::CANCELLED : grpc::Status::OK);
      return;
    }
    --left_;
    message_.set_status(Response::SERVING);
    writing_ = true;
    stream_->StartWrite(&message_);
  }

  ResponseStream<Response>* const stream_;
  int left_;  // messages still to write; -1: for ever
  Heard* const heard_;
  Response message_;
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
};

class CqMethodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    // Check waits until its client goes away, then answers CANCELLED.
    check_ = std::make_unique<CqUnaryMethod<Request, Response>>(
        cq.get(),
        [this](grpc::ServerContext* context, grpc::ByteBuffer* request,
               grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,
               grpc::ServerCompletionQueue* queue, void* tag) {
          service_.RequestCheck(context, request, responder, queue, queue, tag);
        },
        [this](grpc::ServerContext&, const Request&, Response*, UnaryReply* reply) {
          reply->OnCancelled([this, reply] {
            cancelled_.Notify();
            reply->Finish(absl::CancelledError("the client went away"));
          });
        },
        /*notify_cancel=*/true);
    // Watch writes as many messages as request.service() has letters;
    // "forever" writes until the client goes, "refuse" refuses.
    watch_ = std::make_unique<CqWriteStreamMethod<Request, Response>>(
        cq.get(),
        [this](grpc::ServerContext* context, grpc::ByteBuffer* request,
               grpc::ServerAsyncWriter<grpc::ByteBuffer>* writer,
               grpc::ServerCompletionQueue* queue, void* tag) {
          service_.RequestWatch(context, request, writer, queue, queue, tag);
        },
        [this](grpc::ServerContext&, const Request& request,
               ResponseStream<Response>* stream) -> ResponseStreamEvents* {
          if (request.service() == "refuse") {
            stream->Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"));
            return nullptr;
          }
          const int count = request.service() == "forever"
                                ? -1
                                : static_cast<int>(request.service().size());
          return new Producer(stream, count, &heard_);
        });
    check_->Accept();
    watch_->Accept();
    loop_ = std::make_unique<CompletionQueueLoop>(std::move(cq), nullptr, "cq-test");
    stub_ = health::Health::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    server_->Shutdown();
    loop_->Stop();
  }

  static void SetDeadline(grpc::ClientContext& context, absl::Duration in) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + in));
  }

  // Waits (at most 10 s) until a producer heard OnDone(), then says
  // whether it heard it exactly once.
  bool DoneOnce() {
    absl::MutexLock lock(&heard_.mu);
    heard_.mu.AwaitWithTimeout(absl::Condition(&heard_, &Heard::AnyDone),
                               absl::Seconds(10));
    return heard_.dones == 1;
  }

  RawHealth service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CqUnaryMethod<Request, Response>> check_;
  std::unique_ptr<CqWriteStreamMethod<Request, Response>> watch_;
  std::unique_ptr<CompletionQueueLoop> loop_;
  std::unique_ptr<health::Health::Stub> stub_;
  absl::Notification cancelled_;
  Heard heard_;
};

TEST_F(CqMethodsTest, AWaitingUnaryCallLearnsThatItsClientWentAway) {
  grpc::ClientContext context;
  SetDeadline(context, absl::Milliseconds(200));
  Response response;
  EXPECT_EQ(stub_->Check(&context, Request(), &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(cancelled_.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(CqMethodsTest, AStreamWritesEachMessageThenFinishesAndItsProducerHearsDoneOnce) {
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(10));
  Request request;
  request.set_service("abc");
  std::unique_ptr<grpc::ClientReader<Response>> reader = stub_->Watch(&context, request);
  Response response;
  int read = 0;
  while (reader->Read(&response)) ++read;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(read, 3);
  EXPECT_TRUE(DoneOnce());
  absl::MutexLock lock(&heard_.mu);
  EXPECT_EQ(heard_.cancels, 0);
}

TEST_F(CqMethodsTest, AClientThatGoesAwayCancelsTheProducerWhichThenHearsDoneOnce) {
  grpc::ClientContext context;
  Request request;
  request.set_service("forever");
  std::unique_ptr<grpc::ClientReader<Response>> reader = stub_->Watch(&context, request);
  Response response;
  ASSERT_TRUE(reader->Read(&response));
  context.TryCancel();
  while (reader->Read(&response)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(DoneOnce());
  absl::MutexLock lock(&heard_.mu);
  EXPECT_EQ(heard_.cancels, 1);
}

TEST_F(CqMethodsTest, AStreamRefusedAtItsStartEndsWithTheRefusal) {
  grpc::ClientContext context;
  SetDeadline(context, absl::Seconds(10));
  Request request;
  request.set_service("refuse");
  std::unique_ptr<grpc::ClientReader<Response>> reader = stub_->Watch(&context, request);
  Response response;
  EXPECT_FALSE(reader->Read(&response));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace fencegate
