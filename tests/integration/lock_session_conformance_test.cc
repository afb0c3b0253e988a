// Bad input that only a stream can carry, against the real
// fencegate-lockservice (its Session RPC): a message that does not parse and
// one over gRPC's receive limit in the middle of a stream, a request id
// reused while in flight, a half-close and a cancel with calls in flight.
// Each call is applied once or not at all: every Acquire goes to a resource
// of its own, so afterwards each resource is either free or held once (hold
// count 1, the stream's holder), and one whose grant was answered is held
// with the token answered. Afterwards the service still serves.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/session_bad_requests.h"
#include "tests/testing/health_check.h"
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/own_channel.h"
#include "harness/poll.h"
#include "tests/testing/raw_call.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::conformance {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::AcquireCall;
using ::fencegate::testing::IsOk;
using ::testing::HasSubstr;

constexpr char kHolder[] = "streamer";

// `count` Acquires of resources <prefix>1..<prefix><count>, ids 1..count
// (from `first_id`), in one message.
std::string Acquires(const std::string& prefix, int count, int first_id = 1) {
  std::vector<v1::LockCall> calls;
  for (int i = first_id; i < first_id + count; ++i) {
    calls.push_back(AcquireCall(i, absl::StrCat(prefix, i), kHolder, absl::Seconds(60)));
  }
  return testing::EncodeLockCalls(calls);
}

// The tokens granted by answers in `messages`, by request id; other
// answers are failures of the test unless `allow_errors`.
std::map<uint64_t, uint64_t> Grants(const std::vector<std::string>& messages,
                                    bool allow_errors = false) {
  std::map<uint64_t, uint64_t> grants;
  for (const std::string& bytes : messages) {
    absl::StatusOr<v1::LockSessionResponse> message = testing::DecodeLockResponse(bytes);
    EXPECT_THAT(message, IsOk());
    if (!message.ok()) continue;
    for (const v1::LockResult& result : message->results()) {
      if (result.result_case() == v1::LockResult::kAcquire &&
          result.acquire().acquired()) {
        EXPECT_TRUE(grants.emplace(result.request_id(), result.acquire().token()).second)
            << "request " << result.request_id() << " answered twice";
      } else if (!allow_errors) {
        ADD_FAILURE() << "unexpected answer: " << result.ShortDebugString();
      }
    }
  }
  return grants;
}

class LockSessionConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                                                {"--db=" + dir_.File("locks.db")},
                                                dir_.path(), "lockservice");
    ASSERT_THAT(server, IsOk());
    server_ = *std::move(server);
    auto channel = testing::OwnChannel(server_->address());
    ASSERT_THAT(channel, IsOk());
    channel_ = *channel;
    stub_ = v1::LockService::NewStub(channel_);
  }

  void TearDown() override {
    if (HasFailure() && server_)
      std::cerr << "--- lock service:\n" << server_->LogTail() << "\n";
  }

  // Describes <prefix>1..<prefix><count>: each is free, or held once by the
  // stream's holder; those in `granted` with their token. Returns how many
  // are held.
  int CheckAppliedOnceOrNotAtAll(const std::string& prefix, int count,
                                 const std::map<uint64_t, uint64_t>& granted = {}) {
    int held = 0;
    for (int i = 1; i <= count; ++i) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
      v1::DescribeRequest request;
      request.set_resource(absl::StrCat(prefix, i));
      v1::DescribeResponse described;
      grpc::Status status = stub_->Describe(&ctx, request, &described);
      EXPECT_TRUE(status.ok()) << status.error_message();
      auto grant = granted.find(i);
      if (!described.held()) {
        EXPECT_TRUE(grant == granted.end()) << "acknowledged grant " << i << " is lost";
        continue;
      }
      ++held;
      EXPECT_EQ(described.holder(), kHolder);
      EXPECT_EQ(described.hold_count(), 1u) << "Acquire " << i << " was applied twice";
      if (grant != granted.end()) {
        EXPECT_EQ(described.token(), grant->second) << i;
      }
    }
    return held;
  }

  void ExpectStillServing() {
    ASSERT_OK_AND_ASSIGN(testing::Serving serving, testing::HealthStatus(channel_));
    EXPECT_EQ(serving, testing::Serving::kServing);
    testing::RawStreamReply reply =
        testing::RawStreamingCall(channel_, kLockSessionMethod, {Acquires("after", 3)});
    EXPECT_TRUE(reply.status.ok()) << reply.status.error_message();
    EXPECT_EQ(Grants(reply.responses).size(), 3u);
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LockService::Stub> stub_;
};

TEST_F(LockSessionConformanceTest,
       AMessageThatDoesNotParseEndsTheStreamAfterAnsweringTheOnesBefore) {
  const std::string broken("\x0a\x7f\x08\x01", 4);  // a call of 127 bytes, with 2
  testing::RawStreamReply reply = testing::RawStreamingCall(
      channel_, kLockSessionMethod,
      {Acquires("malformed", 10), broken, Acquires("malformed", 5, 11)});
  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(reply.status.error_message(),
              HasSubstr("not a valid fencegate.v1.LockSessionRequest"));
  const std::map<uint64_t, uint64_t> granted = Grants(reply.responses);
  EXPECT_EQ(granted.size(), 10u);  // everything before it, answered
  for (const auto& [id, token] : granted) EXPECT_LE(id, 10u);
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("malformed", 15, granted), 10);
  ExpectStillServing();
}

TEST_F(LockSessionConformanceTest, AMessageOverTheReceiveLimitEndsTheStream) {
  // One call over gRPC's default 4 MiB receive limit.
  const std::string huge = testing::EncodeLockCalls(
      {AcquireCall(11, "oversized11", std::string(5 << 20, 'h'), absl::Seconds(60))});
  testing::RawStreamReply reply = testing::RawStreamingCall(
      channel_, kLockSessionMethod, {Acquires("oversized", 10), huge});
  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << reply.status.error_message();
  // Those before it may or may not have been answered before the stream was
  // cut, but each is applied once or not at all; the huge one is not.
  CheckAppliedOnceOrNotAtAll("oversized", 11, Grants(reply.responses));
  ExpectStillServing();
}

TEST_F(LockSessionConformanceTest,
       ARequestIdReusedWhileInFlightIsRefusedAndTheFirstStands) {
  const std::string message = testing::EncodeLockCalls(
      {AcquireCall(5, "reused1", kHolder, absl::Seconds(60)),
       AcquireCall(5, "reused2", kHolder, absl::Seconds(60))});  // the first in flight
  testing::RawStreamReply reply =
      testing::RawStreamingCall(channel_, kLockSessionMethod, {message});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  std::vector<v1::LockResult> answers;
  for (const std::string& bytes : reply.responses) {
    ASSERT_OK_AND_ASSIGN(v1::LockSessionResponse response,
                         testing::DecodeLockResponse(bytes));
    answers.insert(answers.end(), response.results().begin(), response.results().end());
  }
  ASSERT_EQ(answers.size(), 2u);
  // The refusal comes first: the first call is still in flight then.
  EXPECT_EQ(answers[0].request_id(), 5u);
  ASSERT_EQ(answers[0].result_case(), v1::LockResult::kError);
  EXPECT_EQ(answers[0].error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(answers[0].error().message(), HasSubstr("request_id 5"));
  ASSERT_EQ(answers[1].result_case(), v1::LockResult::kAcquire);
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("reused", 2, {{1, answers[1].acquire().token()}}),
            1);
  ExpectStillServing();
}

TEST_F(LockSessionConformanceTest, AHalfClosedStreamAnswersEveryCallInFlightThenEndsOk) {
  // RawStreamingCall half-closes right after its last write: the 32
  // Acquires are still in flight then.
  testing::RawStreamReply reply = testing::RawStreamingCall(channel_, kLockSessionMethod,
                                                            {Acquires("halfclosed", 32)});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  const std::map<uint64_t, uint64_t> granted = Grants(reply.responses);
  EXPECT_EQ(granted.size(), 32u);
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("halfclosed", 32, granted), 32);
}

TEST_F(LockSessionConformanceTest,
       AClientThatCancelsWithCallsInFlightGetsEachAppliedOnceOrNotAtAll) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = stub_->Session(&ctx);
  v1::LockSessionRequest message;
  ASSERT_TRUE(message.ParseFromString(Acquires("cancelled", 32)));
  // And one that parks behind a held resource, to be cancelled with it.
  *message.add_calls() =
      AcquireCall(33, "cancelled1", "someone else", absl::Seconds(60), absl::Seconds(60));
  ASSERT_TRUE(stream->Write(message));
  ctx.TryCancel();
  v1::LockSessionResponse response;
  while (stream->Read(&response)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  CheckAppliedOnceOrNotAtAll("cancelled", 32);
  ExpectStillServing();
  // The parked one, if it was read, leaves the queue with its stream.
  EXPECT_THAT(testing::PollUntil(
                  [&] {
                    grpc::ClientContext describe;
                    v1::DescribeRequest request;
                    request.set_resource("cancelled1");
                    v1::DescribeResponse described;
                    return stub_->Describe(&describe, request, &described).ok() &&
                           described.waiters() == 0;
                  },
                  absl::Seconds(30), "the cancelled stream's parked Acquire to leave"),
              IsOk());
}

}  // namespace
}  // namespace fencegate::conformance
