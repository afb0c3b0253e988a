// Bad input that only a stream can carry, against the real fencegate-gateway
// (its Session RPC): a message that does not parse and one over gRPC's
// receive limit in the middle of a stream, a request id reused while in
// flight, a half-close and a cancel with requests in flight. Each request
// is applied once or not at all: every write goes to a key of its own on a
// fresh resource, so the resource's revision (the largest version) equals
// the number of keys present exactly when no write was applied twice, and
// a write that was answered OK must be there. Afterwards the gateway still
// serves.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/session_bad_requests.h"
#include "tests/testing/health_check.h"
#include "tests/testing/own_channel.h"
#include "tests/testing/raw_call.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::conformance {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::testing::HasSubstr;

v1::GatewayCall PutCall(uint64_t id, const std::string& resource, const std::string& key) {
  v1::GatewayCall call;
  call.set_request_id(id);
  v1::WriteRequest* write = call.mutable_write();
  write->set_resource(resource);
  write->set_token(1);
  write->mutable_mutation()->set_key(key);
  write->mutable_mutation()->set_value(absl::StrCat("value of ", key));
  return call;
}

// `count` puts to keys k1..k<count> of `resource`, ids 1..count, in one message.
std::string Puts(const std::string& resource, int count, int first_id = 1) {
  v1::GatewaySessionRequest message;
  for (int i = first_id; i < first_id + count; ++i) {
    *message.add_calls() = PutCall(i, resource, absl::StrCat("k", i));
  }
  return message.SerializeAsString();
}

class SessionConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::ServerProcess::Start(
        FENCEGATE_GATEWAY_BIN, {"--db=" + dir_.File("gateway.db")}, dir_.path(), "gateway");
    ASSERT_THAT(server, IsOk());
    gateway_ = *std::move(server);
    auto channel = testing::OwnChannel(gateway_->address());
    ASSERT_THAT(channel, IsOk());
    channel_ = *channel;
    stub_ = v1::Gateway::NewStub(channel_);
  }

  void TearDown() override {
    if (HasFailure() && gateway_) std::cerr << "--- gateway:\n" << gateway_->LogTail() << "\n";
  }

  // Lists `resource` in one snapshot (List reads committed state in one
  // statement) and returns how many of its keys k1..k<count> are there.
  // Fails the test if a write was applied twice (the revision, the largest
  // version, is past the number of keys: every applied write adds one key
  // and one revision, whatever else is still being committed), if a value
  // is not its writer's, or if a key in `acked` is missing.
  int CheckAppliedOnceOrNotAtAll(const std::string& resource, int count,
                                 const std::vector<uint64_t>& acked = {}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::ListRequest list;
    list.set_resource(resource);
    list.set_page_size(1000);
    v1::ListResponse listed;
    grpc::Status status = stub_->List(&ctx, list, &listed);
    EXPECT_TRUE(status.ok()) << status.error_message();
    uint64_t revision = 0;
    std::set<uint64_t> present;
    for (const v1::KeyInfo& key : listed.keys()) {
      revision = std::max(revision, key.version());
      uint64_t i = 0;
      EXPECT_TRUE(absl::SimpleAtoi(key.key().substr(1), &i)) << key.key();
      EXPECT_TRUE(i >= 1 && i <= static_cast<uint64_t>(count)) << key.key();
      present.insert(i);
      EXPECT_EQ(key.size_bytes(), absl::StrCat("value of ", key.key()).size());
    }
    EXPECT_EQ(revision, present.size()) << "a write was applied twice";
    for (uint64_t id : acked) {
      EXPECT_TRUE(present.count(id)) << "acknowledged write " << id << " is lost";
    }
    return static_cast<int>(present.size());
  }

  void ExpectStillServing() {
    ASSERT_OK_AND_ASSIGN(testing::Serving serving, testing::HealthStatus(channel_));
    EXPECT_EQ(serving, testing::Serving::kServing);
    testing::RawStreamReply reply =
        testing::RawStreamingCall(channel_, kSessionMethod, {Puts("after", 3)});
    EXPECT_TRUE(reply.status.ok()) << reply.status.error_message();
    ASSERT_OK_AND_ASSIGN(auto answers, AnswersOf(reply.responses));
    EXPECT_EQ(answers.size(), 3u);
    for (const auto& [id, answer] : answers) EXPECT_TRUE(answer.status.ok()) << id;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::ServerProcess> gateway_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Gateway::Stub> stub_;
};

TEST_F(SessionConformanceTest, AMessageThatDoesNotParseEndsTheStreamAfterAnsweringTheOnesBefore) {
  const std::string broken("\x0a\x7f\x08\x01", 4);  // a call of 127 bytes, with 2
  testing::RawStreamReply reply = testing::RawStreamingCall(
      channel_, kSessionMethod, {Puts("malformed", 10), broken, Puts("malformed", 5, 11)});

  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(reply.status.error_message(),
              HasSubstr("not a valid fencegate.v1.GatewaySessionRequest"));
  ASSERT_OK_AND_ASSIGN(auto answers, AnswersOf(reply.responses));
  std::vector<uint64_t> acked;
  for (const auto& [id, answer] : answers) {
    EXPECT_TRUE(answer.status.ok()) << id << ": " << answer.status.error_message();
    EXPECT_LE(id, 10u) << "a request after the broken message was answered";
    acked.push_back(id);
  }
  EXPECT_EQ(acked.size(), 10u);  // everything before it, answered
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("malformed", 15, acked), 10);
  ExpectStillServing();
}

TEST_F(SessionConformanceTest, AMessageOverTheReceiveLimitEndsTheStream) {
  v1::GatewaySessionRequest huge;
  *huge.add_calls() = PutCall(11, "oversized", "k11");
  huge.mutable_calls(0)->mutable_write()->mutable_mutation()->set_value(
      std::string(10 << 20, 'o'));  // over the 9 MiB + 64 KiB limit
  testing::RawStreamReply reply = testing::RawStreamingCall(
      channel_, kSessionMethod, {Puts("oversized", 10), huge.SerializeAsString()});

  EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << reply.status.error_message();
  ASSERT_OK_AND_ASSIGN(auto answers, AnswersOf(reply.responses));
  std::vector<uint64_t> acked;
  for (const auto& [id, answer] : answers) {
    if (answer.status.ok()) acked.push_back(id);
  }
  // Those before it may or may not have been answered before the stream
  // was cut, but each is there once or not at all; the huge one is not.
  CheckAppliedOnceOrNotAtAll("oversized", 11, acked);
  ExpectStillServing();
}

TEST_F(SessionConformanceTest, ARequestIdReusedWhileInFlightIsRefusedAndTheFirstStands) {
  v1::GatewaySessionRequest message;
  *message.add_calls() = PutCall(5, "reused", "k1");
  *message.add_calls() = PutCall(5, "reused", "k2");  // same id, the first in flight
  testing::RawStreamReply reply = testing::RawStreamingCall(
      channel_, kSessionMethod, {message.SerializeAsString()});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();

  std::vector<v1::GatewayResult> answers;
  for (const std::string& bytes : reply.responses) {
    v1::GatewaySessionResponse response;
    ASSERT_TRUE(response.ParseFromString(bytes));
    answers.insert(answers.end(), response.results().begin(), response.results().end());
  }
  ASSERT_EQ(answers.size(), 2u);
  // The refusal comes first: the first request is still in flight then.
  EXPECT_EQ(answers[0].request_id(), 5u);
  ASSERT_EQ(answers[0].result_case(), v1::GatewayResult::kError);
  EXPECT_EQ(answers[0].error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(answers[0].error().message(), HasSubstr("request_id 5"));
  EXPECT_EQ(answers[1].request_id(), 5u);
  EXPECT_EQ(answers[1].result_case(), v1::GatewayResult::kWrite);
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("reused", 2, {1}), 1);  // k1 only
  ExpectStillServing();
}

TEST_F(SessionConformanceTest, AHalfClosedStreamAnswersEveryRequestInFlightThenEndsOk) {
  // RawStreamingCall half-closes right after its last write: the 32 writes
  // are still in flight then.
  testing::RawStreamReply reply =
      testing::RawStreamingCall(channel_, kSessionMethod, {Puts("halfclosed", 32)});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_OK_AND_ASSIGN(auto answers, AnswersOf(reply.responses));
  std::vector<uint64_t> acked;
  for (const auto& [id, answer] : answers) {
    EXPECT_TRUE(answer.status.ok()) << id;
    acked.push_back(id);
  }
  EXPECT_EQ(acked.size(), 32u);
  EXPECT_EQ(CheckAppliedOnceOrNotAtAll("halfclosed", 32, acked), 32);
}

TEST_F(SessionConformanceTest, AClientThatCancelsWithRequestsInFlightGetsEachAppliedOnceOrNotAtAll) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = stub_->Session(&ctx);
  v1::GatewaySessionRequest message;
  ASSERT_TRUE(message.ParseFromString(Puts("cancelled", 32)));
  ASSERT_TRUE(stream->Write(message));
  ctx.TryCancel();
  v1::GatewaySessionResponse response;
  while (stream->Read(&response)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  CheckAppliedOnceOrNotAtAll("cancelled", 32);
  ExpectStillServing();
}

}  // namespace
}  // namespace fencegate::conformance
