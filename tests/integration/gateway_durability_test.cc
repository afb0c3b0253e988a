// The real fencegate-gateway under concurrent load and kill -9. Versions come
// from one per-resource revision that grows with every accepted write, so
// sorting accepted writes by version gives their commit order.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
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
  constexpr int kWriters = 8;
  constexpr int kWritesEach = 40;
  constexpr uint64_t kPausedToken = 1;
  std::atomic<uint64_t> next_token{kPausedToken + 1};
  std::atomic<bool> someone_wrote{false};
  absl::Notification first_accepted;
  absl::Mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> accepted;  // (version, token)
  std::vector<std::string> unexpected;
  int rejected = 0;

  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<Stub> stub = NewStub();
      const bool paused = i == 0;
      if (paused && !first_accepted.WaitForNotificationWithTimeout(absl::Seconds(60))) {
        return;
      }
      for (int n = 0; n < kWritesEach; ++n) {
        const uint64_t token = paused ? kPausedToken : next_token.fetch_add(1);
        auto result = Put(*stub, "shared", token, "k", absl::StrCat(token));
        absl::MutexLock lock(&mu);
        if (result.ok()) {
          accepted.emplace_back(result->version(), token);
          if (!someone_wrote.exchange(true)) first_accepted.Notify();
        } else if (InfoOf(result.status()).reason == ErrorReason::kStaleToken &&
                   InfoOf(result.status()).current_token > token) {
          ++rejected;
        } else {
          unexpected.push_back(absl::StrCat("token ", token, ": ",
                                            result.status().ToString()));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_TRUE(unexpected.empty()) << unexpected.front();
  ASSERT_TRUE(first_accepted.HasBeenNotified());
  std::sort(accepted.begin(), accepted.end());
  for (size_t i = 1; i < accepted.size(); ++i) {
    ASSERT_LT(accepted[i - 1].first, accepted[i].first) << "a version was given twice";
    ASSERT_LE(accepted[i - 1].second, accepted[i].second)
        << "token " << accepted[i].second << " was accepted (version "
        << accepted[i].first << ") after token " << accepted[i - 1].second
        << " (version " << accepted[i - 1].first << ")";
  }
  for (const auto& [version, token] : accepted) EXPECT_NE(token, kPausedToken);
  EXPECT_GE(rejected, kWritesEach);  // at least every write of the paused holder
  EXPECT_EQ(accepted.size() + rejected, size_t{kWriters * kWritesEach});
  const uint64_t last_token = accepted.back().second;
  ASSERT_OK_AND_ASSIGN(auto described, Describe(*stub_, "shared"));
  EXPECT_EQ(described.max_token(), last_token);
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "shared", "k"));
  EXPECT_EQ(read.value(), absl::StrCat(last_token));
  EXPECT_EQ(read.version(), accepted.back().first);
}

// Writers put three keys at a time (all or nothing) on one resource with
// ever larger tokens until the gateway is stopped by `signal` mid-load. Then
// it restarts on the same database: each writer's keys must hold one
// request's data, at least as new as its last acknowledged one, and the
// fence must cover every acknowledged token.
void GatewayDurabilityTest::WriteUntilStoppedThenCheck(int signal) {
  constexpr int kWriters = 4;
  constexpr int kAcksBeforeStop = 150;
  std::vector<WriterProgress> progress(kWriters);
  std::atomic<uint64_t> next_token{1};
  std::atomic<int> acks{0};
  absl::Notification enough_acks;
  std::atomic<int> stopped_by_error{0};
  // Every writer's connection is made before the load starts: one made by a
  // writer thread that starts late could find the server already stopped.
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int i = 0; i < kWriters; ++i) stubs.push_back(NewStub());
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      for (int64_t seq = 0; seq < 1000000; ++seq) {
        absl::StatusOr<bool> acked = WriteThreeKeys(*stubs[i], "crash", i, seq,
                                                    next_token.fetch_add(1), progress[i]);
        if (!acked.ok()) {
          ++stopped_by_error;  // the server is gone
          return;
        }
        if (*acked && acks.fetch_add(1) + 1 == kAcksBeforeStop) enough_acks.Notify();
      }
    });
  }
  const bool reached = enough_acks.WaitForNotificationWithTimeout(absl::Seconds(120));
  // Mid-load: requests are in flight.
  if (signal == SIGKILL) {
    server_->Kill();
  } else {
    EXPECT_THAT(server_->Terminate(), IsOk());
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(reached) << "only " << acks.load() << " writes acknowledged";
  EXPECT_EQ(stopped_by_error.load(), kWriters);

  StartServer();
  uint64_t max_acked_token = 0;
  for (int i = 0; i < kWriters; ++i) {
    SCOPED_TRACE(absl::StrCat("writer ", i));
    max_acked_token = std::max(max_acked_token, progress[i].max_acked_token);
    ExpectWriterSurvived(*stub_, "crash", i, progress[i]);
  }
  ASSERT_OK_AND_ASSIGN(auto described,
                       Describe(*stub_, "crash"));
  EXPECT_GE(described.max_token(), max_acked_token);
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
