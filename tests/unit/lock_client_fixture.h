// The fixture of the client library's LockClient tests (lock_client_test.cc,
// lock_client_stream_test.cc): an in-process lock service on a free port
// (real gRPC, real clock, SQLite in a temp dir) and a LockClient of the
// transport the test is instantiated with.
//
// Thread safety: a gtest fixture; the test's thread owns it.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_CLIENT_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_LOCK_CLIENT_FIXTURE_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "fencegate/client/lock_client.h"
#include "gtest/gtest.h"
#include "harness/free_port.h"
#include "harness/temp_dir.h"
#include "lockservice/server/lock_server.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::client {

class LockClientFixture : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    lockservice::LockServerOptions options;
    // Not port 0: a test restarts the service on its port, which no port-0
    // listener or outgoing connection can take below the ephemeral range.
    ASSERT_OK_AND_ASSIGN(const int port, ::fencegate::testing::PickFreePort());
    options.serving.listen = "127.0.0.1:" + std::to_string(port);
    options.db_path = dir_.File("locks.db");
    options.limits.min_ttl = absl::Milliseconds(50);
    Configure(options);
    auto server = lockservice::LockServer::Start(options);
    ASSERT_THAT(server, ::fencegate::testing::IsOk());
    server_ = *std::move(server);
    ClientOptions client_options;
    client_options.retry.max_attempts = 3;
    client_options.lock_transport = GetParam();
    auto client = LockClient::Connect("127.0.0.1:" + std::to_string(server_->port()),
                                      client_options);
    ASSERT_THAT(client, ::fencegate::testing::IsOk());
    client_ = *std::move(client);
  }

  // A test's own server options, before the server starts.
  virtual void Configure(lockservice::LockServerOptions& options) {}

  AcquireOptions Ttl(absl::Duration ttl) {
    AcquireOptions options;
    options.ttl = ttl;
    return options;
  }

  testing::TempDir dir_;
  std::unique_ptr<lockservice::LockServer> server_;
  std::unique_ptr<LockClient> client_;
};

// "Unary" or "Stream", for the instantiations' names.
inline std::string TransportName(const ::testing::TestParamInfo<Transport>& info) {
  return info.param == Transport::kUnary ? "Unary" : "Stream";
}

}  // namespace fencegate::client

#endif  // FENCEGATE_TESTS_UNIT_LOCK_CLIENT_FIXTURE_H_
