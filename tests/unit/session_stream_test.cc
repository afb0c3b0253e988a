// SessionStream, the client core under GatewayClient and LockClient,
// against a gateway double on loopback: a real gRPC server whose Session
// handler records every message it reads and answers only when the test
// says, so the test decides what is in flight. What it checks is the core's
// contract (client/session_stream.h): calls sent while a write is under way
// share messages, Send never blocks, the queue past the in-flight limit is
// bounded and ordered, a stream's end fails what it carried and the next
// stream carries the queue, and destruction answers every call once.
#include "client/session_stream.h"

#include <atomic>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace fencegate::client {
namespace {

namespace v1 = ::fencegate::v1;
using Session = SessionStream<v1::Gateway::Stub, v1::GatewaySessionRequest,
                              v1::GatewaySessionResponse>;

constexpr absl::Duration kPatience = absl::Seconds(30);

// The gateway's Session, as a double: reads calls, answers on request.
class GatewayDouble final : public v1::Gateway::Service {
 public:
  struct Received {
    uint64_t id;
    int answered_before;  // answers written before this call was read
  };

  grpc::Status Session(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::GatewaySessionResponse, v1::GatewaySessionRequest>*
          stream) override {
    {
      absl::MutexLock lock(&mu_);
      ++streams_;
      context_ = context;
      stream_ = stream;
      unanswered_.clear();  // the last stream's calls went with it
    }
    v1::GatewaySessionRequest message;
    while (stream->Read(&message)) {
      absl::MutexLock lock(&mu_);
      sizes_.push_back(message.calls_size());
      for (const v1::GatewayCall& call : message.calls()) {
        received_.push_back(Received{call.request_id(), answered_});
        unanswered_.push_back(call.request_id());
      }
      if (answer_at_once_) AnswerLocked(unanswered_.size());
    }
    absl::MutexLock lock(&mu_);
    if (stream_ == stream) {  // not yet the next stream's
      stream_ = nullptr;
      context_ = nullptr;
    }
    return grpc::Status::OK;
  }

  // Answers the first `n` calls not yet answered, in one message.
  void Answer(size_t n) {
    absl::MutexLock lock(&mu_);
    AnswerLocked(n);
  }
  void AnswerAtOnce() {
    absl::MutexLock lock(&mu_);
    answer_at_once_ = true;
    AnswerLocked(unanswered_.size());
  }
  // Ends the open stream from the server's side.
  void EndStream() {
    absl::MutexLock lock(&mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  // Waits until `n` calls in all were read.
  bool AwaitReceived(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return received_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
  }
  std::vector<Received> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }
  std::vector<int> sizes() {
    absl::MutexLock lock(&mu_);
    return sizes_;
  }
  int streams() {
    absl::MutexLock lock(&mu_);
    return streams_;
  }

 private:
  void AnswerLocked(size_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (stream_ == nullptr || n == 0) return;
    v1::GatewaySessionResponse answers;
    for (size_t i = 0; i < n && !unanswered_.empty(); ++i) {
      v1::GatewayResult* result = answers.add_results();
      result->set_request_id(unanswered_.front());
      result->mutable_write()->set_version(unanswered_.front());
      unanswered_.pop_front();
    }
    answered_ += answers.results_size();
    stream_->Write(answers);
  }

  absl::Mutex mu_;
  grpc::ServerContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  grpc::ServerReaderWriter<v1::GatewaySessionResponse, v1::GatewaySessionRequest>* stream_
      ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<Received> received_ ABSL_GUARDED_BY(mu_);
  std::vector<int> sizes_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> unanswered_ ABSL_GUARDED_BY(mu_);
  int answered_ ABSL_GUARDED_BY(mu_) = 0;
  int streams_ ABSL_GUARDED_BY(mu_) = 0;
  bool answer_at_once_ ABSL_GUARDED_BY(mu_) = false;
};

// What came back for each call, counted so a second answer shows.
class Outcomes {
 public:
  explicit Outcomes(size_t n) : outcomes_(n), answers_(n) {}
  Session::Done For(size_t i) {
    return [this, i](absl::StatusOr<v1::GatewayResult> result) {
      absl::MutexLock lock(&mu_);
      outcomes_[i] = result.status();
      ++answers_[i];
      ++total_;
    };
  }
  bool AwaitTotal(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return total_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
  }
  absl::Status status(size_t i) {
    absl::MutexLock lock(&mu_);
    return outcomes_[i];
  }
  int answers(size_t i) {
    absl::MutexLock lock(&mu_);
    return answers_[i];
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Status> outcomes_ ABSL_GUARDED_BY(mu_);
  std::vector<int> answers_ ABSL_GUARDED_BY(mu_);
  size_t total_ ABSL_GUARDED_BY(mu_) = 0;
};

class SessionStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&double_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Gateway::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                                     grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    session_.reset();
    server_->Shutdown(absl::ToChronoTime(absl::Now()));
  }

  static v1::GatewayCall Write(int i) {
    v1::GatewayCall call;
    call.mutable_write()->set_resource("r");
    call.mutable_write()->mutable_mutation()->set_key(absl::StrCat("k", i));
    return call;
  }
  static absl::Time Later() { return absl::Now() + kPatience; }

  GatewayDouble double_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Gateway::Stub> stub_;
  std::unique_ptr<Session> session_;
};

TEST_F(SessionStreamTest, CallsSentWhileAWriteIsUnderWayShareAMessage) {
  double_.AnswerAtOnce();
  session_ = std::make_unique<Session>(stub_.get(), 256, "the double's stream");
  constexpr int kCalls = 256;
  Outcomes outcomes(kCalls);
  for (int i = 0; i < kCalls; ++i) session_->Send(Write(i), Later(), outcomes.For(i));
  ASSERT_TRUE(outcomes.AwaitTotal(kCalls));
  for (int i = 0; i < kCalls; ++i) EXPECT_TRUE(outcomes.status(i).ok()) << i;
  // One write at a time, and whatever arrived meanwhile went in the next
  // message: 256 calls from a loop that never waits need far fewer
  // messages than calls (one call per message would make 256).
  const std::vector<int> sizes = double_.sizes();
  EXPECT_LT(sizes.size(), kCalls / 4) << "messages for " << kCalls << " calls";
  for (int size : sizes) EXPECT_LE(size, Session::kMaxCallsPerMessage);
  // And in the order they were sent.
  const std::vector<GatewayDouble::Received> received = double_.received();
  ASSERT_EQ(received.size(), static_cast<size_t>(kCalls));
  for (int i = 1; i < kCalls; ++i) EXPECT_LT(received[i - 1].id, received[i].id);
}

TEST_F(SessionStreamTest, PastTheInFlightLimitCallsQueueWithoutBlockingAndGoOutInOrder) {
  constexpr size_t kLimit = 4;
  constexpr int kCalls = 40;
  session_ = std::make_unique<Session>(stub_.get(), kLimit, "the double's stream");
  Outcomes outcomes(kCalls);
  // Nothing is answered yet: a Send that blocked for a place would never
  // return, and the future below would time out.
  std::future<void> sent = std::async(std::launch::async, [&] {
    for (int i = 0; i < kCalls; ++i) session_->Send(Write(i), Later(), outcomes.For(i));
  });
  ASSERT_EQ(sent.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_TRUE(double_.AwaitReceived(kLimit));
  // Answer one at a time; each answer lets one queued call out.
  for (int answered = 0; answered < kCalls; ++answered) {
    double_.Answer(1);
    ASSERT_TRUE(double_.AwaitReceived(std::min<size_t>(kCalls, answered + 1 + kLimit)));
  }
  ASSERT_TRUE(outcomes.AwaitTotal(kCalls));
  const std::vector<GatewayDouble::Received> received = double_.received();
  ASSERT_EQ(received.size(), static_cast<size_t>(kCalls));
  for (int k = 0; k < kCalls; ++k) {
    // Never more than kLimit unanswered when a call arrived, and in order.
    EXPECT_GE(received[k].answered_before, k - static_cast<int>(kLimit) + 1) << k;
    if (k > 0) {
      EXPECT_LT(received[k - 1].id, received[k].id);
    }
    EXPECT_TRUE(outcomes.status(k).ok()) << k;
  }
}

TEST_F(SessionStreamTest, QueuedCallsThatGetPlacesTogetherGoOutInOneMessage) {
  constexpr size_t kLimit = 4;
  session_ = std::make_unique<Session>(stub_.get(), kLimit, "the double's stream");
  Outcomes outcomes(3 * kLimit);
  for (size_t i = 0; i < 3 * kLimit; ++i)
    session_->Send(Write(i), Later(), outcomes.For(i));
  ASSERT_TRUE(double_.AwaitReceived(kLimit));
  const size_t messages = double_.sizes().size();
  // Four answers in one message free four places at once: the four calls
  // queued next fill one message, not one and then three.
  double_.Answer(kLimit);
  ASSERT_TRUE(double_.AwaitReceived(2 * kLimit));
  const std::vector<int> sizes = double_.sizes();
  ASSERT_EQ(sizes.size(), messages + 1);
  EXPECT_EQ(sizes.back(), static_cast<int>(kLimit));
  double_.AnswerAtOnce();
  ASSERT_TRUE(outcomes.AwaitTotal(3 * kLimit));
}

TEST_F(SessionStreamTest, PastTheQueuesBoundACallFailsAtOnceWithResourceExhausted) {
  session_ = std::make_unique<Session>(stub_.get(), 1, "the double's stream");
  const size_t fits = 1 + Session::kQueuedPerPlace;  // one in flight, the rest queued
  Outcomes outcomes(fits + 1);
  for (size_t i = 0; i < fits; ++i) session_->Send(Write(i), Later(), outcomes.For(i));
  // The next one is answered before Send returns, on this thread.
  session_->Send(Write(fits), Later(), outcomes.For(fits));
  EXPECT_EQ(outcomes.answers(fits), 1);
  EXPECT_TRUE(absl::IsResourceExhausted(outcomes.status(fits))) << outcomes.status(fits);
  EXPECT_NE(outcomes.status(fits).message().find("queued (the limit)"),
            std::string::npos);
  double_.AnswerAtOnce();
  ASSERT_TRUE(outcomes.AwaitTotal(fits + 1));
  for (size_t i = 0; i < fits; ++i) EXPECT_TRUE(outcomes.status(i).ok()) << i;
}

TEST_F(SessionStreamTest, AQueuedCallPastItsDeadlineFailsUnsent) {
  session_ = std::make_unique<Session>(stub_.get(), 1, "the double's stream");
  Outcomes outcomes(2);
  session_->Send(Write(0), Later(), outcomes.For(0));
  session_->Send(Write(1), absl::Now(), outcomes.For(1));  // due already
  ASSERT_TRUE(double_.AwaitReceived(1));
  double_.Answer(1);
  ASSERT_TRUE(outcomes.AwaitTotal(2));
  EXPECT_TRUE(outcomes.status(0).ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(outcomes.status(1))) << outcomes.status(1);
  EXPECT_EQ(double_.received().size(), 1u);
}

TEST_F(SessionStreamTest, AStreamsEndFailsItsCallsAndTheNextStreamCarriesTheQueue) {
  constexpr size_t kLimit = 2;
  session_ = std::make_unique<Session>(stub_.get(), kLimit, "the double's stream");
  Outcomes outcomes(5);
  for (int i = 0; i < 5; ++i) session_->Send(Write(i), Later(), outcomes.For(i));
  ASSERT_TRUE(double_.AwaitReceived(kLimit));
  double_.EndStream();  // with calls 0 and 1 unanswered, 2 to 4 queued
  double_.AnswerAtOnce();
  ASSERT_TRUE(outcomes.AwaitTotal(5));
  // What was on the ended stream may or may not have been applied.
  for (int i = 0; i < 2; ++i) {
    const absl::Status status = outcomes.status(i);
    EXPECT_TRUE(absl::IsUnavailable(status)) << i << ": " << status;
    EXPECT_NE(status.message().find("may or may not have been applied"),
              std::string::npos);
  }
  // The calls queued behind it went out on a second stream, once each.
  EXPECT_EQ(double_.streams(), 2);
  for (int i = 2; i < 5; ++i) {
    EXPECT_TRUE(outcomes.status(i).ok()) << i << ": " << outcomes.status(i);
    EXPECT_EQ(outcomes.answers(i), 1) << i;
  }
}

TEST_F(SessionStreamTest, DestroyingTheSessionFailsEveryUnansweredCallOnceWithCancelled) {
  constexpr size_t kLimit = 8;
  constexpr int kCalls = 50;
  session_ = std::make_unique<Session>(stub_.get(), kLimit, "the double's stream");
  Outcomes outcomes(kCalls);
  for (int i = 0; i < kCalls; ++i) session_->Send(Write(i), Later(), outcomes.For(i));
  ASSERT_TRUE(double_.AwaitReceived(kLimit));
  double_.Answer(3);
  ASSERT_TRUE(outcomes.AwaitTotal(3));
  session_.reset();  // returns after every callback ran
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(outcomes.answers(i), 1) << i;
    if (i < 3) continue;
    EXPECT_TRUE(absl::IsCancelled(outcomes.status(i))) << i << ": " << outcomes.status(i);
  }
}

TEST_F(SessionStreamTest, ACallbackMaySendTheNextCall) {
  double_.AnswerAtOnce();
  session_ = std::make_unique<Session>(stub_.get(), 4, "the double's stream");
  // Four closed loops run inside the callbacks, 100 calls each.
  constexpr int kLoops = 4, kEach = 100;
  std::atomic<int> ok{0};
  absl::Notification all_done;
  std::atomic<int> loops_left{kLoops};
  std::function<void(int)> next = [&](int left) {
    session_->Send(Write(left), Later(), [&, left](absl::StatusOr<v1::GatewayResult> r) {
      if (r.ok()) ++ok;
      if (left > 1) {
        next(left - 1);
      } else if (--loops_left == 0) {
        all_done.Notify();
      }
    });
  };
  for (int l = 0; l < kLoops; ++l) next(kEach);
  ASSERT_TRUE(all_done.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(ok.load(), kLoops * kEach);
}

}  // namespace
}  // namespace fencegate::client
