// TLS and mutual TLS with the real binaries and certificates made for the
// test by the openssl tool (nothing secret is committed): a plaintext client
// cannot talk to a TLS server and is told why; mutual TLS refuses a client
// with no certificate; and a lease's holder is the client certificate's
// subject, which alone may renew or release it.
#include <memory>
#include <string>

#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "harness/test_certificates.h"
#include "tests/e2e/two_servers_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class TlsTest : public TwoServersTest {
 protected:
  void SetUp() override {
    auto certs = demo::MakeTestCertificates(dir_.path(), {"alice", "bob"});
    ASSERT_THAT(certs, IsOk());
    certs_ = *std::move(certs);
    const std::vector<std::string> tls = {"--tls_cert=" + certs_.server.cert,
                                          "--tls_key=" + certs_.server.key,
                                          "--tls_client_ca=" + certs_.server.client_ca};
    std::vector<std::string> lock_args = {"--db=" + dir_.File("locks.db")};
    lock_args.insert(lock_args.end(), tls.begin(), tls.end());
    ASSERT_NO_FATAL_FAILURE(StartLockServiceProcess(lock_args));
    std::vector<std::string> gateway_args = {"--db=" + dir_.File("gateway.db")};
    gateway_args.insert(gateway_args.end(), tls.begin(), tls.end());
    ASSERT_NO_FATAL_FAILURE(StartGatewayProcess(gateway_args));
  }

  // A lock client with `tls` and few retries (failures are expected here).
  std::unique_ptr<client::LockClient> LockClientWith(const ClientTlsFiles& tls) {
    client::ClientOptions options;
    options.tls = tls;
    options.retry.max_attempts = 2;
    options.rpc_timeout = absl::Seconds(10);
    auto lock = client::LockClient::Connect(lockservice_->address(), options);
    EXPECT_THAT(lock, IsOk());
    return lock.ok() ? *std::move(lock) : nullptr;
  }

  // --timeout bounds the whole call, retries included: a call that is to
  // fail (a handshake that cannot succeed is UNAVAILABLE, retried) gets
  // less than one that is to succeed.
  absl::StatusOr<testing::ProgramResult> Cli(std::vector<std::string> args,
                                          const std::string& timeout = "10s") {
    args.insert(args.begin(), FENCEGATE_CLI_BIN);
    args.push_back("--lockservice=" + lockservice_->address());
    args.push_back("--timeout=" + timeout);
    return testing::RunProgram(args, absl::Seconds(60));
  }

  demo::TestCertificates certs_;
};

TEST_F(TlsTest, PlaintextClientToATlsServerFailsWithAClearError) {
  std::unique_ptr<client::LockClient> plaintext = LockClientWith(ClientTlsFiles{});
  EXPECT_THAT(plaintext->Describe("r"), StatusIs(absl::StatusCode::kUnavailable));

  ASSERT_OK_AND_ASSIGN(testing::ProgramResult cli, Cli({"describe", "--resource=r"}, "1s"));
  EXPECT_EQ(cli.exit_code, 5) << cli.stderr_text;
  EXPECT_THAT(cli.stderr_text, HasSubstr("The CLI used plaintext: if the server uses "
                                         "TLS, pass --tls_ca"));
}

TEST_F(TlsTest, MutualTlsWithoutAClientCertificateFails) {
  std::unique_ptr<client::LockClient> no_certificate =
      LockClientWith(ClientTlsFiles{certs_.ca, "", ""});
  EXPECT_THAT(no_certificate->Describe("r"), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_OK_AND_ASSIGN(testing::ProgramResult cli,
                       Cli({"describe", "--resource=r", "--tls_ca=" + certs_.ca}, "1s"));
  EXPECT_EQ(cli.exit_code, 5) << cli.stderr_text;
  EXPECT_THAT(cli.stderr_text, HasSubstr("--tls_cert/--tls_key if it requires mutual TLS"));

  // With one, the same calls work, through the library and the CLI.
  std::unique_ptr<client::LockClient> alice = LockClientWith(certs_.clients["alice"]);
  EXPECT_THAT(alice->Describe("r"), IsOk());
  const ClientTlsFiles& files = certs_.clients["alice"];
  ASSERT_OK_AND_ASSIGN(cli, Cli({"describe", "--resource=r", "--tls_ca=" + files.ca,
                                 "--tls_cert=" + files.cert, "--tls_key=" + files.key}));
  EXPECT_EQ(cli.exit_code, 0) << cli.stderr_text;
}

TEST_F(TlsTest, HolderIsTheCertificateSubjectAndOnlyItMayRenewOrRelease) {
  std::unique_ptr<client::LockClient> alice = LockClientWith(certs_.clients["alice"]);
  std::unique_ptr<client::LockClient> bob = LockClientWith(certs_.clients["bob"]);
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome granted, alice->Acquire("r", "worker-1"));
  ASSERT_TRUE(granted.acquired);
  ASSERT_OK_AND_ASSIGN(client::LockState state, bob->Describe("r"));
  EXPECT_EQ(state.holder, "CN=alice/worker-1");

  // Bob cannot pass himself off as alice's worker-1 (no reentrant grant),
  // nor renew or release her lease with her token.
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome impostor, bob->Acquire("r", "worker-1"));
  EXPECT_FALSE(impostor.acquired);
  EXPECT_THAT(bob->Renew("r", granted.token, absl::Seconds(5)),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("CN=bob")));
  EXPECT_THAT(bob->Release("r", granted.token),
              StatusIs(absl::StatusCode::kPermissionDenied));
  ASSERT_OK_AND_ASSIGN(state, alice->Describe("r"));
  EXPECT_EQ(state.token, granted.token);

  // Alice's writes go through the gateway over mutual TLS too.
  client::ClientOptions options;
  options.tls = certs_.clients["alice"];
  ASSERT_OK_AND_ASSIGN(auto gateway,
                       client::GatewayClient::Connect(gateway_->address(), options));
  EXPECT_THAT(gateway->Put({"r", granted.token, granted.signature}, "k", "v"), IsOk());
  EXPECT_THAT(alice->Release("r", granted.token), IsOk());
}

}  // namespace
}  // namespace fencegate::e2e
