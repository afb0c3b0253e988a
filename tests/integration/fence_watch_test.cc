// WatchFences against an in-process lock service on port 0: the catch-up
// from the store and the live events after it form one stream whose
// positions only grow, whatever commits meanwhile, so a follower that
// resumes after the last position it applied misses nothing.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "lockservice/server/lock_server.h"
#include "tests/testing/own_channel.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;

class FenceWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LockServerOptions options;
    options.serving.listen = "127.0.0.1:0";
    options.db_path = dir_.File("locks.db");
    auto server = LockServer::Start(options);
    ASSERT_THAT(server, IsOk());
    server_ = *std::move(server);
    auto channel = testing::OwnChannel(absl::StrCat("127.0.0.1:", server_->port()));
    ASSERT_THAT(channel, IsOk());
    stub_ = v1::LockService::NewStub(*channel);
  }

  // Grants `resource` to a new holder; returns the token.
  uint64_t Grant(v1::LockService::Stub& stub, const std::string& resource) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::AcquireRequest request;
    request.set_resource(resource);
    request.set_holder(absl::StrCat("h", ++holders_));
    request.set_ttl_ms(60000);
    request.set_wait_ms(30000);
    v1::AcquireResponse response;
    grpc::Status status = stub.Acquire(&ctx, request, &response);
    EXPECT_TRUE(status.ok() && response.acquired()) << status.error_message();
    return response.token();
  }

  void Release(v1::LockService::Stub& stub, const std::string& resource, uint64_t token) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::ReleaseRequest request;
    request.set_resource(resource);
    request.set_token(token);
    v1::ReleaseResponse response;
    EXPECT_TRUE(stub.Release(&ctx, request, &response).ok());
  }

  testing::TempDir dir_;
  std::unique_ptr<LockServer> server_;
  std::unique_ptr<v1::LockService::Stub> stub_;
  std::atomic<int> holders_{0};
};

TEST_F(FenceWatchTest, CatchUpAndLiveEventsFormOneIncreasingStreamMissingNothing) {
  // Before the stream: grants, some released (their positions stay).
  absl::Mutex mu;
  std::map<std::string, uint64_t> latest;  // resource -> its last token
  for (int i = 0; i < 300; ++i) {
    const std::string resource = absl::StrCat("r", i % 40);
    const uint64_t token = Grant(*stub_, resource);
    latest[resource] = token;
    Release(*stub_, resource, token);
  }
  // The stream reads from the start while more grants commit from another
  // connection: some land during its catch-up, some after.
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  auto reader = stub_->WatchFences(&ctx, v1::WatchFencesRequest());
  std::map<std::string, uint64_t> seen;
  bool increasing = true;
  bool caught_up = false;
  std::thread follower([&] {
    uint64_t last = 0;
    v1::WatchFencesResponse message;
    while (reader->Read(&message)) {
      for (const v1::FenceEvent& event : message.events()) {
        increasing = increasing && event.position() > last;
        last = event.position();
        seen[event.resource()] = event.position();
      }
      caught_up = caught_up || message.caught_up();
      if (seen.count("sentinel") > 0) return;
    }
  });
  std::thread writer([&] {
    auto channel = testing::OwnChannel(absl::StrCat("127.0.0.1:", server_->port()));
    ASSERT_THAT(channel, IsOk());
    auto stub = v1::LockService::NewStub(*channel);
    for (int i = 0; i < 300; ++i) {
      const std::string resource = absl::StrCat("r", (i * 7) % 60);
      const uint64_t token = Grant(*stub, resource);
      Release(*stub, resource, token);
      absl::MutexLock lock(&mu);
      latest[resource] = token;
    }
  });
  writer.join();
  // Every grant above committed before its Acquire returned; the stream is
  // in commit order, so once it shows this last grant it has shown them all.
  latest["sentinel"] = Grant(*stub_, "sentinel");
  follower.join();
  ctx.TryCancel();
  reader->Finish().IgnoreError();

  EXPECT_TRUE(increasing) << "positions must only grow along the stream";
  EXPECT_TRUE(caught_up);
  for (const auto& [resource, token] : latest) {
    EXPECT_EQ(seen[resource], token) << resource;
  }
}

TEST_F(FenceWatchTest, ResumingAfterAPositionSendsOnlyLaterOnes) {
  const uint64_t a = Grant(*stub_, "a");
  const uint64_t b = Grant(*stub_, "b");
  const uint64_t c = Grant(*stub_, "c");
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  v1::WatchFencesRequest request;
  request.set_after_position(a);
  auto reader = stub_->WatchFences(&ctx, request);
  v1::WatchFencesResponse message;
  std::vector<std::pair<std::string, uint64_t>> got;
  while (reader->Read(&message)) {
    for (const v1::FenceEvent& e : message.events()) got.emplace_back(e.resource(), e.position());
    if (message.caught_up()) break;
  }
  EXPECT_THAT(got, ::testing::ElementsAre(std::make_pair(std::string("b"), b),
                                          std::make_pair(std::string("c"), c)));
  ctx.TryCancel();
  reader->Finish().IgnoreError();
}

TEST_F(FenceWatchTest, ShutdownEndsTheStreamWithUnavailableAtOnce) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto reader = stub_->WatchFences(&ctx, v1::WatchFencesRequest());
  v1::WatchFencesResponse message;
  ASSERT_TRUE(reader->Read(&message));
  ASSERT_TRUE(message.caught_up());
  // The stream would otherwise hold the server up for its whole grace.
  server_->Shutdown();
  while (reader->Read(&message)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

}  // namespace
}  // namespace fencegate::lockservice
