// The client library after a server restart: a call made once the server
// is back succeeds within its own retries, without the caller waiting.
//
// Each test first makes a call while the server is down, which leaves the
// client's channel in TRANSIENT_FAILURE with a reconnect pending. Before
// client/channel.h, such a channel stayed cut off for a second or more
// (gRPC's default reconnect backoff) and nothing polled the reconnection
// but gRPC's backup poller every 5 s, so the first call after the restart
// failed UNAVAILABLE although the server was up. The clients here get a
// budget of under a second (5 attempts, the library's default before it
// retried until call_timeout), so only a channel that reconnects at once
// passes; the default budget, which rides out the outage itself, is
// client_outage_test.cc's.
//
// The calls while the server is down last long enough (three budgets, over
// a second) for gRPC's reconnect backoff to reach its cap of a second, so
// its next attempt may come up to 1.2 s after the restart: a client that
// left the pacing to gRPC fails here about half the time (it did on a
// loaded CI machine, with one failed call); the retry's pause resets the
// backoff (client/channel.h), so the call after the restart connects at
// its first pause.
#include <signal.h>

#include <functional>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using testing::IsOk;

class ClientReconnectTest : public E2eTest {
 protected:
  // `call` succeeds; kill -9 of `server`; `call` fails three times; the
  // same binary on the same port and files. Returns what `call` says then,
  // at once.
  absl::Status CallAfterRestart(std::unique_ptr<testing::ServerProcess>& server,
                                const std::string& binary, const std::string& db,
                                const std::string& name,
                                const std::function<absl::Status()>& call) {
    EXPECT_THAT(call(), IsOk());
    const int port = server->port();
    server->Kill();
    server.reset();
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(call().ok());
    auto restarted =
        testing::ServerProcess::Start(binary, {"--db=" + dir_.File(db)}, dir_.path(), name, port);
    if (!restarted.ok()) return restarted.status();
    server = *std::move(restarted);
    return call();
  }
};

client::ClientOptions ShortBudget() {
  client::ClientOptions options;
  options.retry.max_attempts = 5;
  return options;
}

TEST_F(ClientReconnectTest, LockClientCallRightAfterTheLockServiceRestartsSucceeds) {
  ASSERT_OK_AND_ASSIGN(
      auto lock, client::LockClient::Connect(lockservice_->address(), ShortBudget()));
  EXPECT_THAT(CallAfterRestart(lockservice_, FENCEGATE_LOCKSERVICE_BIN, "locks.db", "lockservice",
                               [&] { return lock->Describe("r").status(); }),
              IsOk());
}

TEST_F(ClientReconnectTest, GatewayClientCallRightAfterTheGatewayRestartsSucceeds) {
  ASSERT_OK_AND_ASSIGN(
      auto gateway, client::GatewayClient::Connect(gateway_->address(), ShortBudget()));
  EXPECT_THAT(CallAfterRestart(gateway_, FENCEGATE_GATEWAY_BIN, "gateway.db", "gateway",
                               [&] { return gateway->Describe("r").status(); }),
              IsOk());
}

}  // namespace
}  // namespace fencegate::e2e
