// The real fencegate-lockservice binary in the test's temp dir, on
// 127.0.0.1 port 0, and a raw gRPC stub of its LockService: the base of
// the integration tests that drive the lock service over gRPC without the
// client library (lockservice_test.cc, lock_kinds_test.cc,
// lock_session_stream_test.cc). A failed test prints the tail of the
// server's log.
//
// Thread safety: a test fixture; stub_ and channel_ may be used from any
// thread once StartServer() has returned.
#ifndef FENCEGATE_TESTS_INTEGRATION_LOCKSERVICE_PROCESS_FIXTURE_H_
#define FENCEGATE_TESTS_INTEGRATION_LOCKSERVICE_PROCESS_FIXTURE_H_

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {

class LockServiceProcessTest : public ::testing::Test {
 protected:
  // Starts the server on <dir_>/locks.db with the flags `extra`, and
  // stub_ on a channel to it.
  void StartServer(std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), "--db=" + dir_.File("locks.db"));
    auto server = ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN, extra, dir_.path(),
                                       "lockservice");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ =
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    stub_ = v1::LockService::NewStub(channel_);
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << "server log tail:\n" << server_->LogTail() << "\n";
    }
  }

  // A call's deadline: `d` from now.
  static void SetDeadline(grpc::ClientContext& ctx,
                          absl::Duration d = absl::Seconds(30)) {
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + d));
  }

  // Release and Describe, over `stub` (or stub_), as the RPCs answer them.
  absl::Status Release(v1::LockService::Stub& stub, const std::string& resource,
                       uint64_t token) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::ReleaseRequest request;
    request.set_resource(resource);
    request.set_token(token);
    v1::ReleaseResponse response;
    return FromGrpcStatus(stub.Release(&ctx, request, &response));
  }
  absl::Status Release(const std::string& resource, uint64_t token) {
    return Release(*stub_, resource, token);
  }
  absl::StatusOr<v1::DescribeResponse> Describe(const std::string& resource) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::DescribeRequest request;
    request.set_resource(resource);
    v1::DescribeResponse response;
    grpc::Status status = stub_->Describe(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LockService::Stub> stub_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_INTEGRATION_LOCKSERVICE_PROCESS_FIXTURE_H_
