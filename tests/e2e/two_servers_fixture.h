// TwoServersTest: the base of the e2e fixtures that start their own
// fencegate-lockservice and fencegate-gateway with flags of their own
// (OwnServersTest, own_servers_fixture.h; PolicyMatrixTest,
// policy_matrix_fixture.h; TlsTest, tls_test.cc): each server started in
// the test's temp dir, and the tail of both servers' logs printed when the
// test failed.
//
// Thread safety: a test fixture, used by its test's thread.
#ifndef FENCEGATE_TESTS_E2E_TWO_SERVERS_FIXTURE_H_
#define FENCEGATE_TESTS_E2E_TWO_SERVERS_FIXTURE_H_

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {

class TwoServersTest : public ::testing::Test {
 protected:
  // Starts lockservice_ with `flags` on `port` (0: a free one). Fatal
  // failure if it does not start: call it in ASSERT_NO_FATAL_FAILURE.
  void StartLockServiceProcess(const std::vector<std::string>& flags, int port = 0) {
    auto locks = testing::ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN, flags,
                                               dir_.path(), "lockservice", port);
    ASSERT_THAT(locks, testing::IsOk());
    lockservice_ = *std::move(locks);
  }

  // Starts gateway_ with `flags`; the same.
  void StartGatewayProcess(const std::vector<std::string>& flags) {
    auto gateway = testing::ServerProcess::Start(FENCEGATE_GATEWAY_BIN, flags, dir_.path(),
                                                 "gateway");
    ASSERT_THAT(gateway, testing::IsOk());
    gateway_ = *std::move(gateway);
  }

  void TearDown() override {
    if (!HasFailure()) return;
    if (lockservice_) std::cerr << "--- lock service:\n" << lockservice_->LogTail() << "\n";
    if (gateway_) std::cerr << "--- gateway:\n" << gateway_->LogTail() << "\n";
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::ServerProcess> lockservice_;
  std::unique_ptr<testing::ServerProcess> gateway_;
};

}  // namespace fencegate::e2e

#endif  // FENCEGATE_TESTS_E2E_TWO_SERVERS_FIXTURE_H_
