// The lock service's Session stream on the real fencegate-lockservice
// binary, over gRPC: a pushed expiry, a parked Acquire that holds up
// nothing, and a stream with 32 Acquires in flight when the server is
// killed (kill -9: no acknowledged grant lost) or stopped (SIGTERM: every
// call it read is answered, then UNAVAILABLE; a call without an answer was
// not applied). No sleeps: reads block under the stream's deadline, and
// waits poll a condition under a deadline.
#include <signal.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/integration/lockservice_process_fixture.h"
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/own_channel.h"
#include "tests/testing/pipelined_stream.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::AcquireCall;
using ::fencegate::testing::DescribeCall;
using ::fencegate::testing::IsOk;
using SessionStream =
    grpc::ClientReaderWriter<v1::LockSessionRequest, v1::LockSessionResponse>;

class LockSessionStreamTest : public testing::LockServiceProcessTest {
 protected:
  static bool Send(SessionStream& stream, const std::vector<v1::LockCall>& calls) {
    v1::LockSessionRequest message;
    for (const v1::LockCall& call : calls) *message.add_calls() = call;
    return stream.Write(message);
  }
};

TEST_F(LockSessionStreamTest, AnExpiryIsPushedOnTheStreamThatAcquiredTheLease) {
  StartServer();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = stub_->Session(&ctx);
  ASSERT_TRUE(Send(*stream, {AcquireCall(1, "r", "alice", absl::Milliseconds(200))}));
  v1::LockSessionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.results_size(), 1);
  ASSERT_TRUE(response.results(0).acquire().acquired());
  const uint64_t token = response.results(0).acquire().token();
  // The next message is the push, once the lease has run out.
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.lost_size(), 1) << response.ShortDebugString();
  EXPECT_EQ(response.lost(0).resource(), "r");
  EXPECT_EQ(response.lost(0).token(), token);
  EXPECT_EQ(response.lost(0).reason(), v1::LeaseLost::EXPIRED);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(LockSessionStreamTest, AParkedAcquireHoldsUpNoOtherCallOfTheStream) {
  StartServer();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = stub_->Session(&ctx);
  ASSERT_TRUE(Send(*stream, {AcquireCall(1, "r", "bob", absl::Seconds(60))}));
  v1::LockSessionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  const uint64_t bobs = response.results(0).acquire().token();
  ASSERT_TRUE(
      Send(*stream, {AcquireCall(2, "r", "alice", absl::Seconds(60), absl::Seconds(30)),
                     DescribeCall(3, "r")}));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_EQ(response.results(0).request_id(), 3u);  // answered while 2 waits
  EXPECT_EQ(response.results(0).describe().waiters(), 1u);
  ASSERT_TRUE(Send(*stream, {testing::ReleaseCall(4, "r", bobs)}));
  std::map<uint64_t, v1::LockResult> answers;
  while (answers.size() < 2 && stream->Read(&response)) {
    for (const v1::LockResult& r : response.results()) answers[r.request_id()] = r;
  }
  ASSERT_EQ(answers.count(2), 1u);
  EXPECT_TRUE(answers[2].acquire().acquired());
  EXPECT_GT(answers[2].acquire().token(), bobs);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// What a stream of pipelined Acquires was answered: the tokens granted,
// by id, and every other answer.
struct StreamGrants {
  std::map<uint64_t, uint64_t> granted;
  std::map<uint64_t, v1::LockResult> refused;
};
using AcquireStream =
    testing::PipelinedStream<v1::LockSessionRequest, v1::LockSessionResponse>;

// One Session stream with up to `depth` Acquires in flight
// (testing/pipelined_stream.h): Acquire i takes resource "s<i>" for holder
// "h" for 10 minutes; its answers go to `grants`, which must outlive the
// stream.
std::unique_ptr<AcquireStream> PipelinedAcquires(v1::LockService::Stub& stub, int depth,
                                                 StreamGrants* grants,
                                                 std::string prefix = "s") {
  return std::make_unique<AcquireStream>(
      [&stub](grpc::ClientContext* ctx) { return stub.Session(ctx); }, depth,
      [prefix = std::move(prefix)](uint64_t id) {
        v1::LockSessionRequest message;
        *message.add_calls() =
            AcquireCall(id, absl::StrCat(prefix, id), "h", absl::Minutes(10));
        return message;
      },
      [grants](const v1::LockSessionResponse& response) {
        for (const v1::LockResult& result : response.results()) {
          if (result.result_case() == v1::LockResult::kAcquire && result.acquire().acquired()) {
            grants->granted[result.request_id()] = result.acquire().token();
          } else {
            grants->refused[result.request_id()] = result;
          }
        }
        return response.results_size();
      });
}

TEST_F(LockSessionStreamTest, KillNineWith32AcquiresInFlightOnOneStreamLosesNoGrant) {
  StartServer();
  StreamGrants grants;
  std::unique_ptr<AcquireStream> stream = PipelinedAcquires(*stub_, /*depth=*/32, &grants);
  ASSERT_TRUE(stream->WaitUntil([&] { return grants.granted.size() >= 300; }));
  server_->Kill();  // mid-load: up to 32 Acquires in flight
  EXPECT_FALSE(stream->Join().ok());
  EXPECT_THAT(grants.refused, ::testing::IsEmpty());

  StartServer();
  uint64_t largest = 0;
  for (const auto& [id, token] : grants.granted) {
    ASSERT_OK_AND_ASSIGN(v1::DescribeResponse held, Describe(absl::StrCat("s", id)));
    EXPECT_TRUE(held.held()) << "acknowledged grant " << id << " is lost";
    EXPECT_EQ(held.token(), token) << id;
    largest = std::max(largest, token);
  }
  // Tokens go on growing past every one acknowledged.
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  v1::AcquireRequest request;
  request.set_resource("after");
  request.set_holder("h");
  request.set_ttl_ms(60000);
  v1::AcquireResponse response;
  ASSERT_TRUE(stub_->Acquire(&ctx, request, &response).ok());
  EXPECT_GT(response.token(), largest);
}

// The clients keep sending until they read the final status, each on a
// connection of its own: closed before they read it, a connection would be
// reset and its client see "Broken pipe" (common/server/grpc_shutdown.h).
TEST_F(LockSessionStreamTest,
       SigtermWithStreamsInFlightAnswersWhatTheyReadThenEndUnavailable) {
  StartServer({"--shutdown_grace=10s"});
  constexpr int kStreams = 4;
  std::vector<std::unique_ptr<v1::LockService::Stub>> stubs;
  std::vector<StreamGrants> grants(kStreams);
  std::vector<std::unique_ptr<AcquireStream>> streams;
  auto prefix = [](int i) { return absl::StrCat("s", i, "-"); };
  for (int i = 0; i < kStreams; ++i) {
    auto channel = testing::OwnChannel(server_->address());
    ASSERT_TRUE(channel.ok()) << channel.status();
    stubs.push_back(v1::LockService::NewStub(*channel));
    streams.push_back(PipelinedAcquires(*stubs.back(), /*depth=*/32, &grants[i], prefix(i)));
  }
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(streams[i]->WaitUntil([&] { return grants[i].granted.size() >= 100; }));
  }
  EXPECT_THAT(server_->Terminate(), IsOk());
  for (int i = 0; i < kStreams; ++i) {
    grpc::Status status = streams[i]->Join();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("shutting down")) << i;
    // A call read during the shutdown may be refused, with UNAVAILABLE.
    for (const auto& [id, result] : grants[i].refused) {
      EXPECT_EQ(result.error().code(), grpc::StatusCode::UNAVAILABLE)
          << result.ShortDebugString();
    }
  }

  StartServer();
  for (int i = 0; i < kStreams; ++i) {
    const std::map<uint64_t, uint64_t>& granted = grants[i].granted;
    for (uint64_t id = 1; id <= streams[i]->sent(); ++id) {
      ASSERT_OK_AND_ASSIGN(v1::DescribeResponse held, Describe(absl::StrCat(prefix(i), id)));
      auto grant = granted.find(id);
      if (grant == granted.end()) {
        EXPECT_FALSE(held.held()) << "Acquire " << id << " got no grant but was applied";
      } else {
        EXPECT_TRUE(held.held()) << "acknowledged grant " << id << " is lost";
        EXPECT_EQ(held.token(), grant->second) << id;
      }
    }
  }
}

}  // namespace
}  // namespace fencegate
