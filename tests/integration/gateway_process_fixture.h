// The real fencegate-gateway binary on 127.0.0.1 port 0 with its database in
// a temp dir, and blocking helpers over its gRPC stub. Every call has a
// deadline; nothing sleeps.
#ifndef FENCEGATE_TESTS_INTEGRATION_GATEWAY_PROCESS_FIXTURE_H_
#define FENCEGATE_TESTS_INTEGRATION_GATEWAY_PROCESS_FIXTURE_H_

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/testing/error_info.h"
#include "tests/testing/own_channel.h"

namespace fencegate {

using ::fencegate::testing::InfoOf;

class GatewayProcessTest : public ::testing::Test {
 public:
  using Stub = fencegate::v1::Gateway::Stub;

 protected:
  // Starts the gateway on dir_/gateway.db (kept across restarts).
  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--db=" + dir_.File("gateway.db")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto server = testing::ServerProcess::Start(FENCEGATE_GATEWAY_BIN, args,
                                                dir_.path(), "gateway");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = NewStub();
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << "gateway log tail:\n" << server_->LogTail() << "\n";
    }
  }

  // A stub on its own connection, once connected (see own_channel.h).
  std::unique_ptr<Stub> NewStub() {
    auto channel = testing::OwnChannel(server_->address());
    EXPECT_TRUE(channel.ok()) << channel.status();
    return fencegate::v1::Gateway::NewStub(
        channel.ok() ? *channel
                     : grpc::CreateChannel(server_->address(),
                                           grpc::InsecureChannelCredentials()));
  }

 public:
  // The calls, one RPC each with a 30 s deadline: plain functions, public so
  // that helpers beside the fixtures (three_key_writers.h,
  // racing_writers.h) use them too.
  static void SetDeadline(grpc::ClientContext& ctx) {
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  }

  static absl::StatusOr<v1::WriteResponse> Put(
      Stub& stub, const std::string& resource, uint64_t token,
      const std::string& key, const std::string& value,
      std::optional<uint64_t> expected_version = std::nullopt) {
    v1::WriteRequest req;
    req.set_resource(resource);
    req.set_token(token);
    req.mutable_mutation()->set_key(key);
    req.mutable_mutation()->set_value(value);
    if (expected_version) req.mutable_mutation()->set_expected_version(*expected_version);
    return Write(stub, req);
  }

  static absl::StatusOr<v1::WriteResponse> Write(Stub& stub,
                                                 const v1::WriteRequest& req) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::WriteResponse resp;
    grpc::Status s = stub.Write(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  }

  // Puts every (key, value) pair in one MultiWrite.
  static absl::StatusOr<v1::MultiWriteResponse> MultiPut(
      Stub& stub, const std::string& resource, uint64_t token,
      const std::vector<std::pair<std::string, std::string>>& pairs) {
    v1::MultiWriteRequest req;
    req.set_resource(resource);
    req.set_token(token);
    for (const auto& [key, value] : pairs) {
      v1::Mutation* m = req.add_mutations();
      m->set_key(key);
      m->set_value(value);
    }
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::MultiWriteResponse resp;
    grpc::Status s = stub.MultiWrite(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  }

  static absl::StatusOr<v1::ReadResponse> Read(Stub& stub, const std::string& resource,
                                               const std::string& key,
                                               uint64_t token = 0) {
    v1::ReadRequest req;
    req.set_resource(resource);
    req.set_key(key);
    req.set_token(token);
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::ReadResponse resp;
    grpc::Status s = stub.Read(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  }

  static absl::StatusOr<v1::DescribeResourceResponse> Describe(
      Stub& stub, const std::string& resource) {
    v1::DescribeResourceRequest req;
    req.set_resource(resource);
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::DescribeResourceResponse resp;
    grpc::Status s = stub.Describe(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  }

 protected:
  testing::TempDir dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<Stub> stub_;
};

}  // namespace fencegate

#endif  // FENCEGATE_TESTS_INTEGRATION_GATEWAY_PROCESS_FIXTURE_H_
