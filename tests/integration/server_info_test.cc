// Both real servers say which build they are, the way an operator and a
// gRPC client see it: fencegate.v1.ServerInfo over gRPC, and the start-up
// log line. The expected values are CMake's (project version, the sha
// cmake/build_info.cmake found), passed in as compile definitions.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/v1/server_info.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"

namespace fencegate {
namespace {

using ::fencegate::testing::ServerProcess;
using ::testing::HasSubstr;

struct Binary {
  const char* program;
  const char* path;
};

class ServerInfoTest : public ::testing::TestWithParam<Binary> {};

TEST_P(ServerInfoTest, ReportsItsVersionOverGrpcAndInTheStartUpLine) {
  const Binary& binary = GetParam();
  fencegate::testing::TempDir dir;
  auto server = ServerProcess::Start(
      binary.path, {"--db=" + dir.File("state.db")}, dir.path(),
      binary.program);
  ASSERT_TRUE(server.ok()) << server.status();

  auto channel =
      grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials());
  auto stub = fencegate::v1::ServerInfo::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  fencegate::v1::GetServerInfoResponse info;
  grpc::Status status =
      stub->GetServerInfo(&context, fencegate::v1::GetServerInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.program(), binary.program);
  EXPECT_EQ(info.version(), FENCEGATE_EXPECTED_VERSION);
  EXPECT_EQ(info.git_sha(), FENCEGATE_EXPECTED_GIT_SHA);

  const std::string sha = FENCEGATE_EXPECTED_GIT_SHA;
  const std::string version_line = absl::StrCat(
      binary.program, " ", FENCEGATE_EXPECTED_VERSION,
      sha.empty() ? " (git sha unknown: not built from a git checkout)"
                  : absl::StrCat(" (git ", sha, ")"));
  EXPECT_THAT((*server)->LogTail(), HasSubstr(version_line + " serving on port"));
  EXPECT_TRUE((*server)->Terminate().ok()) << (*server)->LogTail();
}

INSTANTIATE_TEST_SUITE_P(
    Servers, ServerInfoTest,
    ::testing::Values(Binary{"fencegate-lockservice", FENCEGATE_LOCKSERVICE_BIN},
                      Binary{"fencegate-gateway", FENCEGATE_GATEWAY_BIN}),
    [](const ::testing::TestParamInfo<Binary>& info) {
      return std::string(info.param.program) == "fencegate-gateway" ? "Gateway"
                                                                    : "LockService";
    });

}  // namespace
}  // namespace fencegate
