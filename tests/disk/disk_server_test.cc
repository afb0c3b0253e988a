// Both servers on SQLite with their disk failing below SQLite (the preload,
// disk_faults_preload.cc), as docs/operations.md's "Disk faults" promises:
//   - a full disk refuses writes with RESOURCE_EXHAUSTED naming the file,
//     keeps serving reads, and takes writes again once space returns;
//   - a failed fsync or write stops the server (exit status 74) before
//     anything it may not hold is acknowledged; after a power cut and a restart every
//     acknowledged write is there;
//   - the planted bug disk_fsync_retry (a server that retries the failed
//     fsync and acknowledges) loses an acknowledged write at the power cut,
//     which shows the power cut can catch it.
#include <sys/wait.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/disk/power_cut.h"
#include "tests/integration/gateway_process_fixture.h"

namespace fencegate::disk {
namespace {

using testing::ServerProcess;
using Gateway = GatewayProcessTest;

constexpr int kFailStopExit = 74;  // common/core/fail_stop.h

// A server binary on dir/<name>.db with the preload loaded, restartable.
class DiskServerTest : public ::testing::Test {
 protected:
  void StartServer(const std::string& binary, const std::string& name,
                   std::vector<std::string> extra = {}) {
    binary_ = binary;
    name_ = name;
    extra_ = std::move(extra);
    if (faults_ == nullptr) {
      auto faults = DiskFaults::Create(dir_.File("control"), {Db()});
      ASSERT_TRUE(faults.ok()) << faults.status();
      faults_ = *std::move(faults);
    }
    Restart();
  }

  void Restart() {
    testing::ServerProcessOptions options;
    options.process.argv = {binary_, "--db=" + Db()};
    options.process.argv.insert(options.process.argv.end(), extra_.begin(), extra_.end());
    options.process.env = faults_->Env();
    options.dir = dir_.path();
    options.name = name_;
    options.port = port_;
    auto server = ServerProcess::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    port_ = server_->port();
  }

  // SIGKILL, then the power cut of the database's files.
  void PowerCut() {
    server_->Kill();
    ASSERT_TRUE(faults_->PowerCut().ok());
  }

  // Waits for the server to stop by itself; its exit status.
  int ExitStatus() {
    absl::StatusOr<int> status = server_->process().Wait(absl::Seconds(30));
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << name_ << " log tail:\n" << server_->LogTail() << "\n";
    }
  }

  std::string Db() const { return dir_.File(name_ + ".db"); }

  testing::TempDir dir_;
  std::unique_ptr<DiskFaults> faults_;
  std::unique_ptr<ServerProcess> server_;
  std::string binary_, name_;
  std::vector<std::string> extra_;
  int port_ = 0;
};

// ------------------------------------------------------------------ gateway

class DiskGatewayTest : public DiskServerTest {
 protected:
  void Start(std::vector<std::string> extra = {}) {
    StartServer(FENCEGATE_GATEWAY_BIN, "gateway", std::move(extra));
  }
  std::unique_ptr<Gateway::Stub> Stub() {
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    return v1::Gateway::NewStub(channel);
  }
  // The value of `key` after a restart, or "" if absent.
  std::string ValueOf(Gateway::Stub& stub, const std::string& key) {
    absl::StatusOr<v1::ReadResponse> read = Gateway::Read(stub, "r", key);
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() && read->found() ? read->value() : "";
  }
};

TEST_F(DiskGatewayTest, AFullDiskRefusesWritesNamingItServesReadsAndRecovers) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto stub = Stub();
  ASSERT_TRUE(Gateway::Put(*stub, "r", 1, "a", "1").ok());
  faults_->SetFull(true);
  absl::Status refused = Gateway::Put(*stub, "r", 2, "b", "2").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find("the disk holding " + Db() + " is full"),
            std::string::npos)
      << refused;
  EXPECT_GT(faults_->EnospcReturned(), 0);
  EXPECT_EQ(ValueOf(*stub, "a"), "1");
  EXPECT_EQ(ValueOf(*stub, "b"), "");
  faults_->SetFull(false);
  ASSERT_TRUE(Gateway::Put(*stub, "r", 2, "b", "2").ok());
  EXPECT_EQ(ValueOf(*stub, "b"), "2");
}

TEST_F(DiskGatewayTest, AFailedFsyncStopsItAndEveryAcknowledgedWriteSurvives) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto stub = Stub();
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(Gateway::Put(*stub, "r", i, absl::StrCat("k", i), "v").ok());
  }
  faults_->FailNextFsyncs(1);
  absl::Status unknown = Gateway::Put(*stub, "r", 6, "k6", "v").status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kUnavailable) << unknown;
  EXPECT_EQ(ExitStatus(), kFailStopExit);
  EXPECT_NE(server_->LogSinceStart().find("FATAL: the disk failed under " + Db()),
            std::string::npos);
  ASSERT_NO_FATAL_FAILURE(PowerCut());
  ASSERT_NO_FATAL_FAILURE(Restart());
  stub = Stub();
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(ValueOf(*stub, absl::StrCat("k", i)), "v");
  EXPECT_EQ(ValueOf(*stub, "k6"), "") << "written only before the failed fsync";
  EXPECT_TRUE(Gateway::Put(*stub, "r", 7, "k7", "v").ok());
}

TEST_F(DiskGatewayTest, AFailedWriteStopsIt) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto stub = Stub();
  ASSERT_TRUE(Gateway::Put(*stub, "r", 1, "a", "v").ok());
  faults_->FailNextWrites(1);
  EXPECT_EQ(Gateway::Put(*stub, "r", 2, "b", "v").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(faults_->WriteEioReturned(), 1);
  EXPECT_EQ(ExitStatus(), kFailStopExit);
  ASSERT_NO_FATAL_FAILURE(PowerCut());
  ASSERT_NO_FATAL_FAILURE(Restart());
  stub = Stub();
  EXPECT_EQ(ValueOf(*stub, "a"), "v");
}

TEST_F(DiskGatewayTest, PlantedFsyncRetryLosesAnAcknowledgedWriteAtAPowerCut) {
  ASSERT_NO_FATAL_FAILURE(StartServer(FENCEGATE_GATEWAY_TORTURE_BIN, "gateway", {"--planted_bug=disk_fsync_retry"}));
  auto stub = Stub();
  ASSERT_TRUE(Gateway::Put(*stub, "r", 1, "before", "v").ok());
  faults_->FailNextFsyncs(1);
  ASSERT_TRUE(Gateway::Put(*stub, "r", 2, "acknowledged", "v").ok());
  EXPECT_EQ(faults_->FsyncEioReturned(), 1);
  ASSERT_NO_FATAL_FAILURE(PowerCut());
  ASSERT_NO_FATAL_FAILURE(Restart());
  stub = Stub();
  EXPECT_EQ(ValueOf(*stub, "before"), "v");
  EXPECT_EQ(ValueOf(*stub, "acknowledged"), "") << "the bug's acknowledged write is lost";
}

// ------------------------------------------------------------ lock service

class DiskLockServiceTest : public DiskServerTest {
 protected:
  void Start(const std::string& binary = FENCEGATE_LOCKSERVICE_BIN,
             std::vector<std::string> extra = {}) {
    StartServer(binary, "lockservice", std::move(extra));
  }
  std::unique_ptr<v1::LockService::Stub> Stub() {
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    return v1::LockService::NewStub(channel);
  }
  static void SetDeadline(grpc::ClientContext& ctx) {
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  }
  // A try-lock held for a minute; the token.
  static absl::StatusOr<uint64_t> Acquire(v1::LockService::Stub& stub,
                                          const std::string& resource) {
    v1::AcquireRequest request;
    request.set_resource(resource);
    request.set_holder("h");
    request.set_ttl_ms(60000);
    v1::AcquireResponse response;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    grpc::Status status = stub.Acquire(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    if (!response.acquired()) return absl::AbortedError("not acquired");
    return response.token();
  }
  static absl::StatusOr<v1::DescribeResponse> Describe(v1::LockService::Stub& stub,
                                                       const std::string& resource) {
    v1::DescribeRequest request;
    request.set_resource(resource);
    v1::DescribeResponse response;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    grpc::Status status = stub.Describe(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }
};

TEST_F(DiskLockServiceTest, AFullDiskRefusesAcquiresNamingItAnswersDescribeAndRecovers) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto stub = Stub();
  ASSERT_TRUE(Acquire(*stub, "a").ok());
  faults_->SetFull(true);
  absl::StatusOr<uint64_t> refused = Acquire(*stub, "b");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted)
      << refused.status();
  EXPECT_NE(refused.status().message().find("the disk holding " + Db() + " is full"),
            std::string::npos)
      << refused.status();
  absl::StatusOr<v1::DescribeResponse> a = Describe(*stub, "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held());
  faults_->SetFull(false);
  EXPECT_TRUE(Acquire(*stub, "b").ok());
}

TEST_F(DiskLockServiceTest, AFailedFsyncStopsItAndNoTokenIsHandedOutTwice) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto stub = Stub();
  absl::StatusOr<uint64_t> first = Acquire(*stub, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  faults_->FailNextFsyncs(1);
  EXPECT_EQ(Acquire(*stub, "b").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ExitStatus(), kFailStopExit);
  ASSERT_NO_FATAL_FAILURE(PowerCut());
  ASSERT_NO_FATAL_FAILURE(Restart());
  stub = Stub();
  absl::StatusOr<v1::DescribeResponse> a = Describe(*stub, "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held());
  EXPECT_EQ(a->token(), *first);
  absl::StatusOr<uint64_t> next = Acquire(*stub, "c");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_GT(*next, *first);
}

TEST_F(DiskLockServiceTest, PlantedFsyncRetryHandsOutATokenTwiceAfterAPowerCut) {
  ASSERT_NO_FATAL_FAILURE(Start(FENCEGATE_LOCKSERVICE_TORTURE_BIN, {"--planted_bug=disk_fsync_retry"}));
  auto stub = Stub();
  ASSERT_TRUE(Acquire(*stub, "a").ok());
  faults_->FailNextFsyncs(1);
  absl::StatusOr<uint64_t> acknowledged = Acquire(*stub, "b");
  ASSERT_TRUE(acknowledged.ok()) << acknowledged.status();
  ASSERT_NO_FATAL_FAILURE(PowerCut());
  ASSERT_NO_FATAL_FAILURE(Restart());
  stub = Stub();
  absl::StatusOr<v1::DescribeResponse> b = Describe(*stub, "b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->held()) << "the bug's acknowledged grant is lost";
  absl::StatusOr<uint64_t> again = Acquire(*stub, "c");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_LE(*again, *acknowledged) << "a token at most one already handed out";
}

}  // namespace
}  // namespace fencegate::disk
