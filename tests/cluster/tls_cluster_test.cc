// The lock service on etcd with TLS everywhere: clients to instances
// (mutual TLS), standbys to the leader (mutual TLS, one certificate subject
// for every instance), instances to etcd (TLS with client certificates).
// Certificates are made for the test by the openssl tool. What must hold:
// a call forwarded by a standby is the caller's, not the standby's, and no
// client can borrow the standby's voice to claim another identity; under a
// policy (--policy), the leader judges a forwarded call by its caller's
// subject.
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc/channel_credentials.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "harness/test_certificates.h"
#include "lockservice/server/forwarding_lock_service.h"
#include "tests/cluster/lockservice_cluster.h"
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::testing {
namespace {

using ::testing::HasSubstr;

class TlsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto certs = demo::MakeTestCertificates(dir_.path(), {"alice", "bob"});
    ASSERT_THAT(certs, IsOk());
    certs_ = *std::move(certs);
    const ServerTlsFiles& server = certs_.server;
    LockServiceClusterOptions options;
    options.etcd_tls = server;
    options.client_tls = certs_.clients["alice"];
    options.extra_args = {
        "--tls_cert=" + server.cert, "--tls_key=" + server.key,
        "--tls_client_ca=" + server.client_ca, "--etcd_tls_ca=" + certs_.ca,
        // The instances' own certificate also serves as their etcd client's.
        "--etcd_tls_cert=" + server.cert, "--etcd_tls_key=" + server.key};
    auto cluster = LockServiceCluster::Start(dir_.path(), options);
    ASSERT_THAT(cluster, IsOk());
    cluster_ = *std::move(cluster);
    auto leader = cluster_->WaitLeader();
    ASSERT_THAT(leader, IsOk()) << cluster_->LogTails();
    leader_ = *leader;
    standby_ = 1 - leader_;
    ASSERT_THAT(cluster_->WaitServing(standby_), IsOk()) << cluster_->LogTails();
  }

  void TearDown() override {
    if (HasFailure() && cluster_ != nullptr) std::cerr << cluster_->LogTails();
  }

  std::unique_ptr<client::LockClient> Client(int instance, const std::string& who) {
    client::ClientOptions options;
    options.tls = certs_.clients[who];
    auto lock = client::LockClient::Connect(cluster_->instance(instance).address(), options);
    EXPECT_THAT(lock, IsOk());
    return lock.ok() ? *std::move(lock) : nullptr;
  }

  TempDir dir_;
  demo::TestCertificates certs_;
  std::unique_ptr<LockServiceCluster> cluster_;
  int leader_ = -1;
  int standby_ = -1;
};

TEST_F(TlsClusterTest, AStandbyForwardsTheCallersIdentityNotItsOwn) {
  std::unique_ptr<client::LockClient> alice = Client(standby_, "alice");
  std::unique_ptr<client::LockClient> bob = Client(standby_, "bob");
  std::unique_ptr<client::LockClient> bob_at_leader = Client(leader_, "bob");

  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome granted, alice->Acquire("r", "worker-1"));
  ASSERT_TRUE(granted.acquired);
  ASSERT_OK_AND_ASSIGN(client::LockState state, bob_at_leader->Describe("r"));
  EXPECT_EQ(state.holder, "CN=alice/worker-1");

  // Bob, through the standby or at the leader, cannot touch alice's lease.
  EXPECT_THAT(bob->Release("r", granted.token),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("CN=bob")));
  EXPECT_THAT(bob_at_leader->Renew("r", granted.token, absl::Seconds(5)),
              StatusIs(absl::StatusCode::kPermissionDenied));
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome impostor, bob->Acquire("r", "worker-1"));
  EXPECT_FALSE(impostor.acquired);
  EXPECT_THAT(alice->Release("r", granted.token), IsOk());
}

TEST_F(TlsClusterTest, AClientCannotClaimAnotherIdentityWithTheForwardingHeaders) {
  // Bob calls the leader directly, dressed as a forwarded call from alice.
  auto credentials = MakeChannelCredentials(certs_.clients["bob"]);
  ASSERT_THAT(credentials, IsOk());
  auto stub = v1::LockService::NewStub(
      grpc::CreateChannel(cluster_->instance(leader_).address(), *credentials));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  context.AddMetadata(lockservice::kForwardedMetadata, "1");
  context.AddMetadata(lockservice::kForwardedSubjectMetadata, "CN=alice");
  v1::AcquireRequest request;
  request.set_resource("r2");
  request.set_holder("x");
  request.set_ttl_ms(30000);
  v1::AcquireResponse response;
  ASSERT_TRUE(stub->Acquire(&context, request, &response).ok());
  ASSERT_TRUE(response.acquired());

  std::unique_ptr<client::LockClient> alice = Client(leader_, "alice");
  ASSERT_OK_AND_ASSIGN(client::LockState state, alice->Describe("r2"));
  EXPECT_EQ(state.holder, "CN=bob/x");  // the header was not believed
}

// The same over a Session stream: a standby relays it as raw bytes, and the
// leader records the caller of the stream, not the standby, as the holder.
TEST_F(TlsClusterTest, AStreamRelayedByAStandbyIsTheCallersToo) {
  auto credentials = MakeChannelCredentials(certs_.clients["alice"]);
  ASSERT_THAT(credentials, IsOk());
  auto stub = v1::LockService::NewStub(
      grpc::CreateChannel(cluster_->instance(standby_).address(), *credentials));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = stub->Session(&context);
  v1::LockSessionRequest message;
  *message.add_calls() = AcquireCall(1, "r3", "worker-2", absl::Seconds(30));
  ASSERT_TRUE(stream->Write(message));
  v1::LockSessionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_TRUE(response.results(0).acquire().acquired()) << response.ShortDebugString();
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  std::unique_ptr<client::LockClient> bob = Client(leader_, "bob");
  ASSERT_OK_AND_ASSIGN(client::LockState state, bob->Describe("r3"));
  EXPECT_EQ(state.holder, "CN=alice/worker-2");
}

// The same cluster under a policy that lets alice lock under locks/ only:
// calls a standby forwards (unary, and a Session stream it relays) are
// judged by the caller's subject, never the standby's, whose certificate the
// policy does not name. `ctest -R policy` runs it (tests/CMakeLists.txt).
class TlsClusterPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto certs = demo::MakeTestCertificates(dir_.path(), {"alice", "bob"});
    ASSERT_THAT(certs, IsOk());
    certs_ = *std::move(certs);
    const std::string policy = dir_.File("fencegate.policy");
    std::ofstream(policy) << "allow CN=alice acquire,describe locks/\n";
    const ServerTlsFiles& server = certs_.server;
    LockServiceClusterOptions options;
    options.etcd_tls = server;
    options.client_tls = certs_.clients["alice"];
    options.extra_args = {"--tls_cert=" + server.cert,
                          "--tls_key=" + server.key,
                          "--tls_client_ca=" + server.client_ca,
                          "--etcd_tls_ca=" + certs_.ca,
                          "--etcd_tls_cert=" + server.cert,
                          "--etcd_tls_key=" + server.key,
                          "--policy=" + policy};
    auto cluster = LockServiceCluster::Start(dir_.path(), options);
    ASSERT_THAT(cluster, IsOk());
    cluster_ = *std::move(cluster);
    auto leader = cluster_->WaitLeader();
    ASSERT_THAT(leader, IsOk()) << cluster_->LogTails();
    standby_ = 1 - *leader;
    ASSERT_THAT(cluster_->WaitServing(standby_), IsOk()) << cluster_->LogTails();
  }

  void TearDown() override {
    if (HasFailure() && cluster_ != nullptr) std::cerr << cluster_->LogTails();
  }

  std::unique_ptr<v1::LockService::Stub> StandbyAs(const std::string& who) {
    auto credentials = MakeChannelCredentials(certs_.clients[who]);
    EXPECT_THAT(credentials, IsOk());
    return v1::LockService::NewStub(
        grpc::CreateChannel(cluster_->instance(standby_).address(), *credentials));
  }

  TempDir dir_;
  demo::TestCertificates certs_;
  std::unique_ptr<LockServiceCluster> cluster_;
  int standby_ = -1;
};

TEST_F(TlsClusterPolicyTest, AStandbysForwardedCallsAreJudgedAsTheCallers) {
  auto acquire = [](v1::LockService::Stub& stub, const std::string& resource) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::AcquireRequest request;
    request.set_resource(resource);
    request.set_ttl_ms(30000);
    v1::AcquireResponse response;
    return stub.Acquire(&context, request, &response);
  };
  auto alice = StandbyAs("alice");
  EXPECT_TRUE(acquire(*alice, "locks/a").ok());
  grpc::Status refused = acquire(*alice, "other/a");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(refused.error_message(), HasSubstr("identity 'CN=alice'"));
  refused = acquire(*StandbyAs("bob"), "locks/b");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(refused.error_message(), HasSubstr("identity 'CN=bob'"));

  // A Session stream the standby relays: each call judged as alice's.
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = alice->Session(&context);
  v1::LockSessionRequest message;
  *message.add_calls() = AcquireCall(1, "locks/s", "", absl::Seconds(30));
  *message.add_calls() = AcquireCall(2, "other/s", "", absl::Seconds(30));
  ASSERT_TRUE(stream->Write(message));
  std::map<uint64_t, v1::LockResult> results;
  v1::LockSessionResponse response;
  while (results.size() < 2 && stream->Read(&response)) {
    for (const v1::LockResult& result : response.results()) {
      results[result.request_id()] = result;
    }
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[1].acquire().acquired()) << results[1].ShortDebugString();
  EXPECT_EQ(results[2].error().code(), grpc::StatusCode::PERMISSION_DENIED)
      << results[2].ShortDebugString();
  EXPECT_THAT(results[2].error().message(), HasSubstr("identity 'CN=alice'"));
  stream->WritesDone();
  context.TryCancel();
}

}  // namespace
}  // namespace fencegate::testing
