// The real fencegate-gateway under concurrent load and kill -9. Versions come
// from one per-resource revision that grows with every accepted write, so
// sorting accepted writes by version gives their commit order.
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
#include "tests/integration/racing_writers.h"
#include "tests/integration/three_key_writers.h"
#include "tests/testing/pipelined_stream.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;

class GatewayDurabilityTest : public GatewayProcessTest {
 protected:
  void WriteUntilStoppedThenCheck(int signal);

  // After a restart: every acknowledged write of a PipelinedStream on
  // `resource` is there with its value, and nothing past the last one sent.
  void ExpectStreamWritesSurvived(const std::string& resource,
                                  const std::vector<uint64_t>& acked, uint64_t sent) {
    for (uint64_t id : acked) {
      absl::StatusOr<v1::ReadResponse> read = Read(*stub_, resource, absl::StrCat("s", id));
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_TRUE(read->found()) << "acknowledged stream write " << id << " is lost";
      EXPECT_EQ(read->value(), absl::StrCat("v", id));
    }
    absl::StatusOr<v1::ReadResponse> past = Read(*stub_, resource, absl::StrCat("s", sent + 1));
    ASSERT_TRUE(past.ok()) << past.status();
    EXPECT_FALSE(past->found());
  }
};

// Seven writers take ever larger tokens from one counter and race to write
// one key; the eighth is a paused holder that wakes up after others have
// written and keeps writing with token 1. In commit order the accepted
// tokens never go down, and the paused holder never gets in.
TEST_F(GatewayDurabilityTest, ConcurrentWritersAcceptedTokensNeverDecreaseInCommitOrder) {
  StartServer();
  RaceOptions options;
  options.writers = 8;
  options.writes_each = 40;
  options.paused = 0;
  options.stub_of = [this](int /*writer*/) { return NewStub(); };
  options.write = [](Stub& stub, uint64_t token,
                     const std::string& /*own_key*/) -> absl::StatusOr<uint64_t> {
    auto result = Put(stub, "shared", token, "k", absl::StrCat(token));
    if (!result.ok()) return result.status();
    return result->version();
  };
  const RaceResult race = RaceWriters(options);
  ASSERT_NO_FATAL_FAILURE(ExpectTokensNeverDecreaseInCommitOrder(race));

  const AcceptedWrite& last = race.accepted.back();
  ASSERT_OK_AND_ASSIGN(auto described, Describe(*stub_, "shared"));
  EXPECT_EQ(described.max_token(), last.token);
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "shared", "k"));
  EXPECT_EQ(read.value(), absl::StrCat(last.token));
  EXPECT_EQ(read.version(), last.version);
}

// Writers put three keys at a time (all or nothing) on one resource with
// ever larger tokens until the gateway is stopped by `signal` mid-load. Then
// it restarts on the same database: each writer's keys must hold one
// request's data, at least as new as its last acknowledged one, and the
// fence must cover every acknowledged token.
void GatewayDurabilityTest::WriteUntilStoppedThenCheck(int signal) {
  constexpr int kWriters = 4;
  constexpr int kAcksBeforeStop = 150;
  std::atomic<int> acks{0};
  absl::Notification enough_acks;
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < kWriters; ++i) stubs.push_back(NewStub());
  ThreeKeyLoad load("crash", std::move(stubs), [&](int /*writer*/) {
    if (acks.fetch_add(1) + 1 == kAcksBeforeStop) enough_acks.Notify();
  });
  const bool reached = enough_acks.WaitForNotificationWithTimeout(absl::Seconds(120));
  // Mid-load: requests are in flight.
  if (signal == SIGKILL) {
    server_->Kill();
  } else {
    EXPECT_THAT(server_->Terminate(), IsOk());
  }
  load.Join();  // each writer stops when the server is gone
  ASSERT_TRUE(reached) << "only " << acks.load() << " writes acknowledged";
  EXPECT_EQ(load.stopped_by_error(), kWriters);

  StartServer();
  load.ExpectSurvived(*stub_);
}

TEST_F(GatewayDurabilityTest, KillNineDuringWriteLoadLosesNoAcknowledgedWrite) {
  StartServer();
  WriteUntilStoppedThenCheck(SIGKILL);
}

// A clean stop under load: calls in flight finish and commit, exit is 0.
TEST_F(GatewayDurabilityTest, SigtermDuringWriteLoadLosesNoAcknowledgedWrite) {
  StartServer({"--shutdown_grace=2s"});
  WriteUntilStoppedThenCheck(SIGTERM);
}

// What a stream of pipelined writes was answered: the ids acknowledged OK,
// and any other answer.
struct StreamWrites {
  std::vector<uint64_t> acked;
  std::vector<std::string> unexpected;
};
using WriteStream =
    testing::PipelinedStream<v1::GatewaySessionRequest, v1::GatewaySessionResponse>;

// One Session stream with up to `depth` writes in flight
// (testing/pipelined_stream.h): write i puts key "s<i>" = "v<i>" on
// `resource` with token 1; its answers go to `writes`, which must outlive
// the stream.
std::unique_ptr<WriteStream> PipelinedWrites(v1::Gateway::Stub& stub, int depth,
                                             StreamWrites* writes,
                                             std::string resource = "stream") {
  return std::make_unique<WriteStream>(
      [&stub](grpc::ClientContext* ctx) { return stub.Session(ctx); }, depth,
      [resource = std::move(resource)](uint64_t id) {
        v1::GatewaySessionRequest message;
        v1::GatewayCall* call = message.add_calls();
        call->set_request_id(id);
        v1::WriteRequest* write = call->mutable_write();
        write->set_resource(resource);
        write->set_token(1);
        write->mutable_mutation()->set_key(absl::StrCat("s", id));
        write->mutable_mutation()->set_value(absl::StrCat("v", id));
        return message;
      },
      [writes](const v1::GatewaySessionResponse& response) {
        for (const v1::GatewayResult& result : response.results()) {
          if (result.result_case() == v1::GatewayResult::kWrite) {
            writes->acked.push_back(result.request_id());
          } else {
            writes->unexpected.push_back(result.ShortDebugString());
          }
        }
        return response.results_size();
      });
}

TEST_F(GatewayDurabilityTest, KillNineWith32WritesInFlightOnOneStreamLosesNoAcknowledgedWrite) {
  StartServer();
  StreamWrites writes;
  std::unique_ptr<WriteStream> stream = PipelinedWrites(*stub_, /*depth=*/32, &writes);
  ASSERT_TRUE(stream->WaitUntil([&] { return writes.acked.size() >= 300; }));
  server_->Kill();  // mid-load: up to 32 writes in flight
  EXPECT_FALSE(stream->Join().ok());
  EXPECT_THAT(writes.unexpected, ::testing::IsEmpty());

  StartServer();
  ExpectStreamWritesSurvived("stream", writes.acked, stream->sent());
}

// A clean stop: each stream answers every write it read, then ends with
// UNAVAILABLE "shutting down" (resend the rest elsewhere), and the exit is
// clean. The clients keep writing until they read that status, on
// connections of their own: closed before they read it, a connection
// would be reset and its client see "Broken pipe"
// (common/server/grpc_shutdown.h).
TEST_F(GatewayDurabilityTest, SigtermWithStreamsInFlightAnswersWhatTheyReadThenEndUnavailable) {
  StartServer({"--shutdown_grace=10s"});
  constexpr int kStreams = 4;
  std::vector<std::unique_ptr<Stub>> stubs;
  std::vector<StreamWrites> writes(kStreams);
  std::vector<std::unique_ptr<WriteStream>> streams;
  for (int i = 0; i < kStreams; ++i) {
    stubs.push_back(NewStub());
    streams.push_back(PipelinedWrites(*stubs.back(), /*depth=*/32, &writes[i],
                                      absl::StrCat("stream", i)));
  }
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(streams[i]->WaitUntil([&] { return writes[i].acked.size() >= 100; }));
  }
  EXPECT_THAT(server_->Terminate(), IsOk());
  for (int i = 0; i < kStreams; ++i) {
    grpc::Status status = streams[i]->Join();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("shutting down")) << i;
    EXPECT_THAT(writes[i].unexpected, ::testing::IsEmpty());
  }

  StartServer();
  for (int i = 0; i < kStreams; ++i) {
    ExpectStreamWritesSurvived(absl::StrCat("stream", i), writes[i].acked,
                               streams[i]->sent());
  }
}

}  // namespace
}  // namespace fencegate
