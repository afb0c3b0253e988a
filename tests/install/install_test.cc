// The installed tree as a user meets it (label install): `cmake --install`
// into a temporary prefix (the ctest fixture install.prefix, before these
// tests), then
//   - the layout: servers and CLI in bin/ (each reports the version), the
//     client library shared and static, headers, .proto files, the CMake
//     package and the pkg-config file;
//   - every public header compiles alone against the prefix: it includes
//     no header of the source tree (no server types);
//   - examples/consumer, configured and built out of tree with the system's
//     cmake through find_package(fencegate 0.2), against the shared and the
//     static library, and compiled by hand with `pkg-config --cflags --libs
//     fencegate-client`; each build runs against real servers started from
//     the prefix's bin/, and its write is read back with the installed CLI;
//   - the package version file: 0.2 is found, 0.1 and 0.3 are not.
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/must_run.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kPrefix = FENCEGATE_INSTALL_PREFIX;
const std::string kLibDir = kPrefix + "/" + FENCEGATE_INSTALL_LIBDIR;
// The soname's version: major.minor (0.x).
const std::string kSoversion = FENCEGATE_EXPECTED_SOVERSION;
// Building the consumer takes a while on a loaded 2-core machine.
constexpr absl::Duration kBuildTimeout = absl::Minutes(10);

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(InstallTest, LayoutOfThePrefix) {
  for (const char* file : {
           "bin/fencegate-lockservice",
           "bin/fencegate-gateway",
           "bin/fencegate",
           "include/fencegate/clock.h",
           "include/fencegate/client_tls_files.h",
           "include/fencegate/token_signature.h",
           "include/fencegate/client/lock_client.h",
           "include/fencegate/client/lease.h",
           "include/fencegate/client/gateway_client.h",
           "include/fencegate/client/fencing.h",
           "include/fencegate/client/client_options.h",
           "include/fencegate/client/errors.h",
           "include/fencegate/client/fencing_token.h",
           "include/fencegate/v1/lock.pb.h",
           "include/fencegate/v1/lock.grpc.pb.h",
           "include/fencegate/v1/gateway.pb.h",
           "include/fencegate/v1/gateway.grpc.pb.h",
           "share/fencegate/proto/fencegate/v1/lock.proto",
           "share/fencegate/proto/fencegate/v1/gateway.proto",
           "share/fencegate/proto/fencegate/v1/errors.proto",
           "share/fencegate/sql/fencegate_sql_api.sql",
       }) {
    EXPECT_TRUE(Exists(kPrefix + "/" + file)) << file;
  }
  const std::string version = FENCEGATE_EXPECTED_VERSION;
  for (const std::string& file : {
           absl::StrCat("libfencegate-client.so.", version),
           absl::StrCat("libfencegate-client.so.", kSoversion),
           std::string("libfencegate-client.so"),
           std::string("libfencegate-client.a"),
           std::string("cmake/fencegate/fencegate-config.cmake"),
           std::string("cmake/fencegate/fencegate-config-version.cmake"),
           std::string("cmake/fencegate/fencegate-targets.cmake"),
           std::string("pkgconfig/fencegate-client.pc"),
       }) {
    EXPECT_TRUE(Exists(kLibDir + "/" + file)) << file;
  }
  // Nothing of the servers' insides, nor of the tests.
  EXPECT_FALSE(Exists(kPrefix + "/include/fencegate/common"));
  EXPECT_FALSE(Exists(kPrefix + "/include/common"));
  EXPECT_FALSE(Exists(kPrefix + "/bin/fencegate-demo"));

  for (const std::string binary :
       {"fencegate-lockservice", "fencegate-gateway", "fencegate"}) {
    ProgramResult result =
        MustRun({kPrefix + "/bin/" + binary, "--version"}, absl::Seconds(30));
    EXPECT_THAT(result.stdout_text,
                HasSubstr(absl::StrCat(binary, " ", version, " (git")));
  }
}

// The shared library's soname names major and minor (0.x: a minor release
// may change the API), and it needs neither SQLite nor the servers' code.
TEST(InstallTest, SharedLibraryNeedsNoServerLibraries) {
  ProgramResult result =
      MustRun({"readelf", "-d", kLibDir + "/libfencegate-client.so"}, absl::Seconds(30));
  EXPECT_THAT(result.stdout_text,
              HasSubstr(absl::StrCat("Library soname: [libfencegate-client.so.",
                                     kSoversion, "]")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("sqlite")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("libpq")));
  result =
      MustRun({"nm", "-D", "-C", "--defined-only", kLibDir + "/libfencegate-client.so"},
              absl::Seconds(30));
  EXPECT_THAT(result.stdout_text, HasSubstr("fencegate::client::LockClient::Connect"));
  EXPECT_THAT(result.stdout_text, HasSubstr("fencegate::client::GatewayClient::Put"));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("fencegate::Sqlite")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("fencegate::lockservice::")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("fencegate::gateway::")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("fencegate::TokenSigner")));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("fencegate::StartGrpcServer")));
}

// Each public header compiles on its own with nothing but the prefix (and
// the system's Abseil, protobuf and gRPC): it includes no header of the
// source tree, so it can carry no server type.
TEST(InstallTest, EveryPublicHeaderCompilesAlone) {
  for (const std::string header : {
           "fencegate/clock.h",
           "fencegate/client_tls_files.h",
           "fencegate/token_signature.h",
           "fencegate/client/client_options.h",
           "fencegate/client/errors.h",
           "fencegate/client/fencing.h",
           "fencegate/client/fencing_token.h",
           "fencegate/client/lease.h",
           "fencegate/client/lock_client.h",
           "fencegate/client/gateway_client.h",
           "fencegate/client/postgres_fence.h",  // with libpqxx's headers
       }) {
    SCOPED_TRACE(header);
    MustRun({FENCEGATE_CXX, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror",
             "-I" + kPrefix + "/include", "-x", "c++", kPrefix + "/include/" + header});
  }
}

// The servers from the prefix's bin/, on free ports in a temp dir.
class ConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        lockservice_, ServerProcess::Start(kPrefix + "/bin/fencegate-lockservice",
                                           {"--db=" + dir_.File("locks.db")}, dir_.path(),
                                           "lockservice"));
    ASSERT_OK_AND_ASSIGN(
        gateway_, ServerProcess::Start(kPrefix + "/bin/fencegate-gateway",
                                       {"--db=" + dir_.File("objects.db")}, dir_.path(),
                                       "gateway"));
  }

  // Runs the consumer `binary` against the servers on its own resource,
  // then reads what it wrote with the installed CLI.
  void RunConsumer(const std::string& binary, const std::string& resource,
                   std::vector<std::string> env = {}) {
    ProgramResult run =
        MustRun({binary, lockservice_->address(), gateway_->address(), resource},
                absl::Seconds(60), std::move(env));
    EXPECT_THAT(run.stdout_text, HasSubstr("read back \"hello from the consumer\""));
    EXPECT_THAT(run.stdout_text, HasSubstr("refused: the gateway holds token"));
    ProgramResult read =
        MustRun({kPrefix + "/bin/fencegate", "read", "--gateway=" + gateway_->address(),
                 "--resource=" + resource, "--key=greeting", "--json"},
                absl::Seconds(30));
    EXPECT_THAT(read.stdout_text, HasSubstr("\"value\":\"hello from the newer holder\""));
  }

  // Configures and builds examples/consumer with `cmake_args`; returns the
  // path of its binary.
  std::string BuildWithCmake(const std::string& name,
                             const std::vector<std::string>& cmake_args) {
    const std::string build = std::string(FENCEGATE_INSTALL_TEST_DIR) + "/" + name;
    std::vector<std::string> configure = {FENCEGATE_CMAKE,
                                          "-S",
                                          FENCEGATE_CONSUMER_SOURCE_DIR,
                                          "-B",
                                          build,
                                          "-DCMAKE_PREFIX_PATH=" + kPrefix,
                                          "-DCMAKE_CXX_COMPILER=" FENCEGATE_CXX,
                                          "-DCMAKE_BUILD_TYPE=Release"};
    configure.insert(configure.end(), cmake_args.begin(), cmake_args.end());
    MustRun({"rm", "-rf", build}, absl::Seconds(30));
    MustRun(configure);
    MustRun({FENCEGATE_CMAKE, "--build", build});
    return build + "/fencegate-consumer";
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> lockservice_;
  std::unique_ptr<ServerProcess> gateway_;
};

TEST_F(ConsumerTest, FindPackageSharedLibrary) {
  const std::string binary = BuildWithCmake("consumer-shared", {});
  ASSERT_FALSE(HasFailure());
  ProgramResult needed = MustRun({"readelf", "-d", binary}, absl::Seconds(30));
  EXPECT_THAT(needed.stdout_text,
              HasSubstr(absl::StrCat("[libfencegate-client.so.", kSoversion, "]")));
  RunConsumer(binary, "consumer-shared");
}

TEST_F(ConsumerTest, FindPackageStaticLibrary) {
  const std::string binary =
      BuildWithCmake("consumer-static", {"-DFENCEGATE_CONSUMER_STATIC=ON"});
  ASSERT_FALSE(HasFailure());
  ProgramResult needed = MustRun({"readelf", "-d", binary}, absl::Seconds(30));
  EXPECT_THAT(needed.stdout_text, Not(HasSubstr("libfencegate-client")));
  RunConsumer(binary, "consumer-static");
}

TEST_F(ConsumerTest, PkgConfig) {
  const std::string pc_env = "PKG_CONFIG_PATH=" + kLibDir + "/pkgconfig";
  ProgramResult flags = MustRun({"pkg-config", "--cflags", "--libs", "fencegate-client"},
                                absl::Seconds(30), {pc_env});
  ASSERT_FALSE(HasFailure());
  std::vector<std::string> compile = {
      FENCEGATE_CXX,
      "-std=c++17",
      "-O1",
      "-o",
      dir_.File("consumer"),
      std::string(FENCEGATE_CONSUMER_SOURCE_DIR) + "/main.cc"};
  for (absl::string_view flag :
       absl::StrSplit(flags.stdout_text, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    compile.emplace_back(flag);
  }
  MustRun(compile);
  ASSERT_FALSE(HasFailure());
  RunConsumer(dir_.File("consumer"), "consumer-pkg-config",
              {"LD_LIBRARY_PATH=" + kLibDir});
}

// find_package(fencegate <version>) through the version file: 0.x accepts
// its own minor release only.
TEST(InstallTest, PackageVersionFile) {
  const std::string build = std::string(FENCEGATE_INSTALL_TEST_DIR) + "/version-check";
  for (const auto& [wanted, found] :
       std::vector<std::pair<std::string, bool>>{{"0.2", true},
                                                 {FENCEGATE_EXPECTED_VERSION, true},
                                                 {"0.1", false},
                                                 {"0.3", false},
                                                 {"1.0", false}}) {
    SCOPED_TRACE(wanted);
    ChildProcess::Options options;
    options.argv = {FENCEGATE_CMAKE,
                    "-S",
                    FENCEGATE_VERSION_CHECK_SOURCE_DIR,
                    "-B",
                    build + "-" + wanted,
                    "-DCMAKE_PREFIX_PATH=" + kPrefix,
                    "-DFENCEGATE_WANTED=" + wanted};
    absl::StatusOr<ProgramResult> result = RunProgram(std::move(options), kBuildTimeout);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->exit_code == 0, found)
        << result->stdout_text << result->stderr_text;
    if (!found) {
      EXPECT_THAT(result->stderr_text,
                  HasSubstr("compatible with requested version \"" + wanted + "\""));
      EXPECT_THAT(result->stderr_text, HasSubstr("version: " FENCEGATE_EXPECTED_VERSION));
    }
  }
}

}  // namespace
}  // namespace fencegate::testing
