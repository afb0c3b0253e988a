// The client library's GatewayClient against an in-process gateway and lock
// service on port 0, both checking signed tokens: a Lease's token and
// signature ride on every call, the first use of a new lease raises the
// fence, and refusals come back as typed errors carrying the gateway's
// current token.
#include "fencegate/client/gateway_client.h"

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/signing_keys.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "gateway/gateway_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lockservice/lock_server.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;

class GatewayClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> key = NewKeyLine("k1", /*sign=*/true);
    ASSERT_THAT(key, IsOk());
    std::ofstream(dir_.File("keys.txt")) << *key << "\n";

    lockservice::LockServerOptions lock_options;
    lock_options.serving.listen = "127.0.0.1:0";
    lock_options.db_path = dir_.File("locks.db");
    lock_options.serving.signing_keys_path = dir_.File("keys.txt");
    auto locks = lockservice::LockServer::Start(lock_options);
    ASSERT_THAT(locks, IsOk());
    locks_ = *std::move(locks);

    gateway::GatewayServerOptions gateway_options;
    gateway_options.serving.listen = "127.0.0.1:0";
    gateway_options.db_path = dir_.File("gateway.db");
    gateway_options.serving.signing_keys_path = dir_.File("keys.txt");
    auto gateway = gateway::GatewayServer::Start(gateway_options);
    ASSERT_THAT(gateway, IsOk());
    gateway_ = *std::move(gateway);

    auto lock = LockClient::Connect(absl::StrCat("127.0.0.1:", locks_->port()));
    ASSERT_THAT(lock, IsOk());
    lock_ = *std::move(lock);
    auto client = GatewayClient::Connect(absl::StrCat("127.0.0.1:", gateway_->port()));
    ASSERT_THAT(client, IsOk());
    client_ = *std::move(client);
  }

  std::unique_ptr<Lease> MustLease(const std::string& resource, const std::string& holder) {
    AcquireOptions options;
    options.ttl = absl::Seconds(60);
    auto lease = lock_->AcquireLease(resource, holder, options);
    EXPECT_THAT(lease, IsOk());
    return lease.ok() ? *std::move(lease) : nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<lockservice::LockServer> locks_;
  std::unique_ptr<gateway::GatewayServer> gateway_;
  std::unique_ptr<LockClient> lock_;
  std::unique_ptr<GatewayClient> client_;
};

TEST_F(GatewayClientTest, StaleTokenIsATypedErrorCarryingTheGatewaysToken) {
  std::unique_ptr<Lease> first = MustLease("r", "alice");
  const uint64_t old_token = first->token();
  const TokenSignature old_signature = first->signature();
  ASSERT_THAT(client_->Put(*first, "k", "alice"), IsOk());
  first.reset();  // released
  std::unique_ptr<Lease> second = MustLease("r", "bob");
  ASSERT_THAT(client_->Put(*second, "k", "bob"), IsOk());

  absl::StatusOr<WriteResult> late = client_->Put({"r", old_token, old_signature}, "k", "x");
  EXPECT_TRUE(IsStaleToken(late.status())) << late.status();
  EXPECT_EQ(CurrentToken(late.status()), second->token());
  EXPECT_FALSE(IsBadSignature(late.status()));
  ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(*second, "k"));
  EXPECT_EQ(read.value, "bob");
}

TEST_F(GatewayClientTest, VersionMismatchIsTypedWithTheCurrentVersion) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  ASSERT_OK_AND_ASSIGN(WriteResult first, client_->Put(*lease, "k", "1"));
  ASSERT_OK_AND_ASSIGN(WriteResult second, client_->Put(*lease, "k", "2", first.version));
  absl::StatusOr<WriteResult> lost = client_->Put(*lease, "k", "3", first.version);
  EXPECT_TRUE(IsVersionMismatch(lost.status())) << lost.status();
  EXPECT_EQ(CurrentVersion(lost.status()), second.version);
  EXPECT_EQ(CurrentToken(lost.status()), lease->token());
}

TEST_F(GatewayClientTest, FirstUseOfANewLeaseRaisesTheFenceEvenForAList) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  ASSERT_OK_AND_ASSIGN(ResourceSummary before, client_->Describe("r"));
  EXPECT_EQ(before.max_token, 0u);
  // List carries no token on the wire; the client fences first.
  ASSERT_THAT(client_->List(*lease), IsOk());
  ASSERT_OK_AND_ASSIGN(ResourceSummary after, client_->Describe("r"));
  EXPECT_EQ(after.max_token, lease->token());
}

TEST_F(GatewayClientTest, TheLeasesSignatureRidesAlongAndAForgedOneIsTyped) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  EXPECT_EQ(lease->signature().key_id, "k1");
  EXPECT_THAT(client_->Put(*lease, "k", "v"), IsOk());
  EXPECT_THAT(client_->MultiWrite(*lease, {{"a", "1", std::nullopt}, {"b", "2", std::nullopt}}),
              IsOk());
  EXPECT_THAT(client_->Fence(*lease), IsOk());

  absl::StatusOr<WriteResult> unsigned_write = client_->Put({"r", lease->token(), {}}, "k", "x");
  EXPECT_TRUE(IsBadSignature(unsigned_write.status())) << unsigned_write.status();
  EXPECT_FALSE(IsStaleToken(unsigned_write.status()));
}

}  // namespace
}  // namespace fencegate::client
