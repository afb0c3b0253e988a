// The servers' own health service (common/server/health_service.h), in a
// server of this process on its completion-queue loop, asked through
// grpc.health.v1's generated stub: what Check and Watch answer, and that it
// replaces gRPC's default service even where that one is enabled.
#include "common/server/health_service.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/server/completion_queue_loop.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/raw_call.h"

namespace fencegate {
namespace {

namespace health = ::grpc::health::v1;
using Response = health::HealthCheckResponse;

class HealthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // As the lock service's servers do in a process both run in: ours
    // must still be the one that answers.
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetOption(
        std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
    builder.RegisterService(health_.service());
    std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    health_.Serve(cq.get());
    loop_ = std::make_unique<CompletionQueueLoop>(std::move(cq), nullptr, "health-test");
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials());
    stub_ = health::Health::NewStub(channel_);
  }
  void TearDown() override {
    health_.Shutdown();
    server_->Shutdown();
    loop_->Stop();
  }

  // Check(service): the status, or -1 with *error set.
  int Check(const std::string& service, grpc::Status* error = nullptr) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    health::HealthCheckRequest request;
    request.set_service(service);
    Response response;
    grpc::Status status = stub_->Check(&context, request, &response);
    if (error != nullptr) *error = status;
    return status.ok() ? response.status() : -1;
  }

  // The next status a Watch reads, or -1 once it ended.
  static int Next(grpc::ClientReader<Response>& watch) {
    Response response;
    return watch.Read(&response) ? response.status() : -1;
  }

  std::unique_ptr<grpc::ClientReader<Response>> Watch(grpc::ClientContext& context,
                                                      const std::string& service) {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    health::HealthCheckRequest request;
    request.set_service(service);
    return stub_->Watch(&context, request);
  }

  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CompletionQueueLoop> loop_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<health::Health::Stub> stub_;
};

TEST_F(HealthServiceTest, CheckAnswersTheServersStatusAndNotFoundForOtherNames) {
  EXPECT_EQ(Check(""), Response::SERVING);
  health_.SetServing(false);
  EXPECT_EQ(Check(""), Response::NOT_SERVING);
  grpc::Status error;
  EXPECT_EQ(Check("fencegate.v1.NoSuchService", &error), -1);
  EXPECT_EQ(error.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthServiceTest, WatchSendsTheStatusThenEachChangeAndEndsAtShutdown) {
  grpc::ClientContext context;
  auto watch = Watch(context, "");
  EXPECT_EQ(Next(*watch), Response::SERVING);
  health_.SetServing(false);
  EXPECT_EQ(Next(*watch), Response::NOT_SERVING);
  health_.SetServing(true);
  EXPECT_EQ(Next(*watch), Response::SERVING);
  health_.Shutdown();
  EXPECT_EQ(Next(*watch), Response::NOT_SERVING);
  EXPECT_EQ(Next(*watch), -1);
  EXPECT_TRUE(watch->Finish().ok());
  EXPECT_EQ(Check(""), Response::NOT_SERVING);  // and stays so
  health_.SetServing(true);
  EXPECT_EQ(Check(""), Response::NOT_SERVING);
}

TEST_F(HealthServiceTest, WatchOfAnUnknownNameSaysSoAndHearsNoServerChange) {
  grpc::ClientContext unknown_context, server_context;
  auto unknown = Watch(unknown_context, "fencegate.v1.NoSuchService");
  EXPECT_EQ(Next(*unknown), Response::SERVICE_UNKNOWN);
  auto server = Watch(server_context, "");
  EXPECT_EQ(Next(*server), Response::SERVING);
  health_.SetServing(false);
  EXPECT_EQ(Next(*server), Response::NOT_SERVING);
  health_.Shutdown();  // ends both; the unknown one heard nothing since
  EXPECT_EQ(Next(*unknown), -1);
  EXPECT_TRUE(unknown->Finish().ok());
}

TEST_F(HealthServiceTest, AWatchTheClientCancelsEndsWithoutHoldingTheServerUp) {
  auto context = std::make_unique<grpc::ClientContext>();
  auto watch = Watch(*context, "");
  EXPECT_EQ(Next(*watch), Response::SERVING);
  context->TryCancel();
  EXPECT_EQ(Next(*watch), -1);
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // TearDown's server Shutdown() (no deadline) returns only once every
  // call has ended: a watch left behind would hang it.
}

TEST_F(HealthServiceTest, ARequestThatDoesNotParseIsRefusedNamingItsTypeOnEitherMethod) {
  // Field 1, length 5, but only two bytes follow.
  const std::string malformed =
      "\x0a\x05"
      "ab";
  const grpc::Status check =
      testing::RawUnaryCall(channel_, "/grpc.health.v1.Health/Check", malformed).status;
  const grpc::Status watch =
      testing::RawStreamingCall(channel_, "/grpc.health.v1.Health/Watch", {malformed})
          .status;
  for (const grpc::Status& status : {check, watch}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(),
                ::testing::HasSubstr("grpc.health.v1.HealthCheckRequest"));
  }
  EXPECT_EQ(Check(""), Response::SERVING);  // and the service goes on
}

}  // namespace
}  // namespace fencegate
