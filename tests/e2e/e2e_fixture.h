// The end-to-end fixture: the real fencegate-lockservice and
// fencegate-gateway binaries on 127.0.0.1 (on ports below the kernel's
// ephemeral range, harness/server_process.h) in a fresh temp dir, real
// client processes (fencegate-demo-client driven over its line protocol,
// and the fencegate CLI), and the test's own LockClient and GatewayClient
// to check what the servers hold, independently of the clients under test.
// Nothing sleeps a fixed time: every wait polls a condition under a
// deadline.
#ifndef FENCEGATE_TESTS_E2E_E2E_FIXTURE_H_
#define FENCEGATE_TESTS_E2E_E2E_FIXTURE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "harness/client_process.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gtest/gtest.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"

namespace fencegate::e2e {

// Every lease in these tests. Long enough that a loaded 2-core machine
// renews in time, short enough to keep the tests quick.
inline constexpr absl::Duration kTtl = absl::Seconds(2);

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A fencegate-demo-client named `name` on `resource`, keeping its counter
  // behind the gateway, or in a plain SQLite file in the temp dir when
  // `plain` (no fence). `lockservice` overrides the lock service address.
  absl::StatusOr<std::unique_ptr<demo::ClientProcess>> StartClient(
      const std::string& name, const std::string& resource, bool plain = false,
      const std::string& lockservice = "");

  // Sends one command; fails on any status other than the reply's.
  absl::StatusOr<demo::Message> Call(demo::ClientProcess& client, absl::string_view word);
  absl::StatusOr<demo::Message> Acquire(demo::ClientProcess& client);

  // Kleppmann's paused holder up to its late write: client 1 acquires the
  // fresh `resource`, checks its lease and reads the counter (0), is frozen
  // (SIGSTOP: its renewal thread too) until the lease is gone, client 2
  // acquires, reads and writes, and client 1 is thawed. Any step that goes
  // otherwise is an error saying which.
  struct PausedHolder {
    std::unique_ptr<demo::ClientProcess> client1;
    std::unique_ptr<demo::ClientProcess> client2;
    uint64_t token1 = 0;
    uint64_t token2 = 0;
  };
  absl::StatusOr<PausedHolder> PauseHolderUntilSuperseded(const std::string& resource);

  // Polls Describe until the lease with `token` no longer holds `resource`.
  absl::Status WaitUntilLeaseGone(const std::string& resource, uint64_t token,
                                  absl::Duration timeout = kTtl * 3 + absl::Seconds(10));

  // Runs the fencegate CLI with `args`, plus --timeout and the server's
  // address (--lockservice or --gateway, unless given) when `connect`.
  absl::StatusOr<testing::ProgramResult> Cli(std::vector<std::string> args,
                                          bool connect = true);

  std::string lockservice_address() const { return lockservice_->address(); }
  std::string gateway_address() const { return gateway_->address(); }

  testing::TempDir dir_;
  std::unique_ptr<testing::ServerProcess> lockservice_;
  std::unique_ptr<testing::ServerProcess> gateway_;
  std::unique_ptr<client::LockClient> lock_;
  std::unique_ptr<client::GatewayClient> gateway_client_;
  std::vector<std::string> client_logs_;
};

// The first unsigned number after "\"key\":" in a JSON text; 0 if none.
uint64_t JsonUint(const std::string& json, const std::string& key);

}  // namespace fencegate::e2e

#endif  // FENCEGATE_TESTS_E2E_E2E_FIXTURE_H_
