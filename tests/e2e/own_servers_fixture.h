// A test's own fencegate-lockservice and fencegate-gateway, started with
// flags of its own (E2eTest, e2e_fixture.h, starts both with the defaults
// in SetUp), each with the test's client of it: the base of the tests of
// grant-time fencing (--lockservice) and of signed tokens
// (--signing_keys). Both keep their state in the test's temp dir; a failed
// test prints the tail of both servers' logs (two_servers_fixture.h).
//
// Thread safety: a test fixture, used by its test's thread.
#ifndef FENCEGATE_TESTS_E2E_OWN_SERVERS_FIXTURE_H_
#define FENCEGATE_TESTS_E2E_OWN_SERVERS_FIXTURE_H_

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/e2e/two_servers_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {

class OwnServersTest : public TwoServersTest {
 protected:
  // The lock service on <dir_>/locks.db with `flags`, on `port` (0: a free
  // one), and lock_ connected to it.
  void StartLockService(std::vector<std::string> flags = {}, int port = 0) {
    flags.insert(flags.begin(), "--db=" + dir_.File("locks.db"));
    ASSERT_NO_FATAL_FAILURE(StartLockServiceProcess(flags, port));
    auto lock = client::LockClient::Connect(lockservice_->address());
    ASSERT_THAT(lock, testing::IsOk());
    lock_ = *std::move(lock);
  }

  // The gateway on <dir_>/gateway.db with `flags`, and gateway_client_
  // connected to it.
  void StartGateway(std::vector<std::string> flags) {
    flags.insert(flags.begin(), "--db=" + dir_.File("gateway.db"));
    ASSERT_NO_FATAL_FAILURE(StartGatewayProcess(flags));
    auto gateway_client = client::GatewayClient::Connect(gateway_->address());
    ASSERT_THAT(gateway_client, testing::IsOk());
    gateway_client_ = *std::move(gateway_client);
  }

  // The gateway's fence on `resource` (0, the failure recorded, if it
  // cannot say).
  uint64_t FenceOf(const std::string& resource) {
    absl::StatusOr<client::ResourceSummary> summary = gateway_client_->Describe(resource);
    EXPECT_THAT(summary, testing::IsOk());
    return summary.ok() ? summary->max_token : 0;
  }

  std::unique_ptr<client::LockClient> lock_;
  std::unique_ptr<client::GatewayClient> gateway_client_;
};

}  // namespace fencegate::e2e

#endif  // FENCEGATE_TESTS_E2E_OWN_SERVERS_FIXTURE_H_
