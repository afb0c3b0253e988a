// Two real fencegate-gateway processes on one PostgreSQL server, started
// by the test from Debian's binaries in a temp dir (PostgresServer::Shared()),
// each test on a schema of its own; blocking helpers over each gateway's
// gRPC stub (gateway_process_fixture.h). Nothing sleeps.
#ifndef FENCEGATE_TESTS_INTEGRATION_GATEWAY_POSTGRES_FIXTURE_H_
#define FENCEGATE_TESTS_INTEGRATION_GATEWAY_POSTGRES_FIXTURE_H_

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
#include "harness/postgres_server.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {

class GatewaysOnPostgresTest : public GatewayProcessTest {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(postgres_, testing::PostgresServer::Shared());
    ASSERT_OK_AND_ASSIGN(uri_, postgres_->NewSchemaUri());
  }

  void TearDown() override {
    if (!HasFailure()) return;
    for (int i = 0; i < 2; ++i) {
      if (gateways_[i] != nullptr) {
        std::cerr << "gateway " << i << " log tail:\n" << gateways_[i]->LogTail() << "\n";
      }
    }
    if (postgres_ != nullptr) {
      std::cerr << "postgres log tail:\n" << postgres_->LogTail() << "\n";
    }
  }

  // Starts gateway `index` (0 or 1) on the test's schema, with `extra`
  // flags.
  void StartGateway(int index, const std::string& storage = "",
                    std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), "--storage=" + (storage.empty() ? uri_ : storage));
    auto gateway = testing::ServerProcess::Start(FENCEGATE_GATEWAY_BIN, extra, dir_.path(),
                                                 absl::StrCat("gateway", index));
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    gateways_[index] = *std::move(gateway);
  }

  // A stub on its own connection to gateway `index`.
  std::unique_ptr<Stub> StubOf(int index) {
    auto channel = testing::OwnChannel(gateways_[index]->address());
    EXPECT_TRUE(channel.ok()) << channel.status();
    return v1::Gateway::NewStub(
        channel.ok() ? *channel
                     : grpc::CreateChannel(gateways_[index]->address(),
                                           grpc::InsecureChannelCredentials()));
  }

  testing::PostgresServer* postgres_ = nullptr;
  std::string uri_;
  std::unique_ptr<testing::ServerProcess> gateways_[2];
};

}  // namespace fencegate

#endif  // FENCEGATE_TESTS_INTEGRATION_GATEWAY_POSTGRES_FIXTURE_H_
