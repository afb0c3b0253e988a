// A second server started by mistake on what a first one serves (the same
// SQLite state, the same gRPC port, the same metrics port) fails to start
// and says why; the first serves on, untouched. Started as an operator
// would: the real binaries, twice (docs/operations.md, "A second instance
// by mistake"). Also StateLock itself, in-process.
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/core/state_lock.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/free_port.h"
#include "harness/log_file.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kLockService[] = FENCEGATE_LOCKSERVICE_BIN;
constexpr char kGateway[] = FENCEGATE_GATEWAY_BIN;

client::Fencing Fenced(uint64_t token) {
  client::Fencing fencing;
  fencing.resource = "orders";
  fencing.token = token;
  return fencing;
}

client::AcquireOptions WithTtl(absl::Duration ttl) {
  client::AcquireOptions options;
  options.ttl = ttl;
  return options;
}

// Runs a server that is expected not to start; its output (stderr) and
// exit code.
testing::ProgramResult RunToEnd(std::vector<std::string> argv) {
  absl::StatusOr<testing::ProgramResult> result =
      testing::RunProgram(argv, absl::Seconds(60));
  EXPECT_THAT(result, IsOk());
  return result.ok() ? *result : testing::ProgramResult{};
}

// A server on the SQLite state `db`, its files <dir>/<name>.*.
std::unique_ptr<testing::ServerProcess> StartOnState(const char* binary,
                                                     const testing::TempDir& dir,
                                                     const std::string& db,
                                                     const std::string& name) {
  absl::StatusOr<std::unique_ptr<testing::ServerProcess>> server =
      testing::ServerProcess::Start(binary, {"--db=" + db}, dir.path(), name);
  EXPECT_THAT(server, IsOk());
  return server.ok() ? *std::move(server) : nullptr;
}

// A client (client::LockClient or client::GatewayClient) of the server at
// `address`; null, the failure recorded, if it cannot connect.
template <typename Client>
std::unique_ptr<Client> Connected(const std::string& address) {
  absl::StatusOr<std::unique_ptr<Client>> connected = Client::Connect(address);
  EXPECT_THAT(connected, IsOk());
  return connected.ok() ? *std::move(connected) : nullptr;
}

// Starts `binary` on `listen` and the state `db` that `first` serves: it
// must exit 1, naming the state, its lock file and the first's PID.
void ExpectRefusedBeside(const testing::ServerProcess& first, const char* binary,
                         const std::string& listen, const std::string& db) {
  SCOPED_TRACE(listen);
  const testing::ProgramResult second =
      RunToEnd({binary, "--listen=" + listen, "--db=" + db, "--metrics_listen="});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.stderr_text, HasSubstr("failed to start"));
  EXPECT_THAT(second.stderr_text, HasSubstr("the state " + db + " is in use"));
  EXPECT_THAT(second.stderr_text, HasSubstr(db + ".lock"));
  EXPECT_THAT(second.stderr_text, HasSubstr(absl::StrCat("PID ", first.pid())));
}

// kill -9 of `first`, then a server on the same state: it starts (nothing
// was left locked) and its PID is in the lock file.
std::unique_ptr<testing::ServerProcess> KillAndStartNext(testing::ServerProcess& first,
                                                         const char* binary,
                                                         const testing::TempDir& dir,
                                                         const std::string& db) {
  first.Kill();
  std::unique_ptr<testing::ServerProcess> next = StartOnState(binary, dir, db, "next");
  if (next != nullptr) {
    EXPECT_EQ(testing::ReadWholeFile(db + ".lock"), absl::StrCat(next->pid(), "\n"));
  }
  return next;
}

// --- StateLock, in-process -------------------------------------------------

TEST(StateLockTest, ASecondLockOnTheSameStateIsRefusedNamingThePid) {
  testing::TempDir dir;
  const std::string db = dir.File("locks.db");
  absl::StatusOr<StateLock> first = StateLock::Acquire(db, "fencegate-lockservice");
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->path(), db + ".lock");
  EXPECT_EQ(testing::ReadWholeFile(db + ".lock"), absl::StrCat(getpid(), "\n"));

  // flock belongs to the open file description: the same process is
  // refused too.
  absl::StatusOr<StateLock> second = StateLock::Acquire(db, "fencegate-lockservice");
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr(absl::StrCat("PID ", getpid()))));
  EXPECT_THAT(second.status().message(), HasSubstr(db + ".lock"));

  // Another database is another state.
  EXPECT_THAT(StateLock::Acquire(dir.File("other.db"), "fencegate-lockservice"), IsOk());

  // Released with its owner; the file stays.
  { StateLock gone = *std::move(first); }
  EXPECT_THAT(StateLock::Acquire(db, "fencegate-lockservice"), IsOk());
}

TEST(StateLockTest, AnUnwritableDirectoryIsAnErrorNamingTheLockFile) {
  const std::string db = "/proc/fencegate-no-such-dir/locks.db";
  absl::StatusOr<StateLock> lock = StateLock::Acquire(db, "fencegate-lockservice");
  EXPECT_THAT(lock, Not(IsOk()));
  EXPECT_THAT(lock.status().message(), HasSubstr(db + ".lock"));
}

// --- two servers on one state ----------------------------------------------

// Each test's temp dir, and the SQLite state the first server runs on.
class SecondInstanceTest : public ::testing::Test {
 protected:
  // The first `binary`, on the state <dir_>/<db_name> (db_); null, the
  // failure recorded, if it did not start.
  std::unique_ptr<testing::ServerProcess> StartFirst(const char* binary,
                                                     const char* db_name) {
    db_ = dir_.File(db_name);
    return StartOnState(binary, dir_, db_, "first");
  }

  testing::TempDir dir_;
  std::string db_;
};

// The reproduction of the bug: the second lock service on the same database
// (and the same port, as a restart script that does not wait would start
// it) exits non-zero naming the state, its lock file and the first's PID;
// the first keeps serving, and a lock taken through it is held once over
// fresh connections, each of which might have reached a second process.
TEST_F(SecondInstanceTest, ASecondLockServiceOnOneDatabaseExitsAndTheFirstServesOn) {
  std::unique_ptr<testing::ServerProcess> first = StartFirst(kLockService, "locks.db");
  ASSERT_NE(first, nullptr);
  std::unique_ptr<client::LockClient> lock =
      Connected<client::LockClient>(first->address());
  ASSERT_NE(lock, nullptr);
  absl::StatusOr<client::AcquireOutcome> held =
      lock->Acquire("dup", "h0", WithTtl(absl::Seconds(60)));
  ASSERT_THAT(held, IsOk());
  ASSERT_TRUE(held->acquired);

  ExpectRefusedBeside(*first, kLockService, first->address(), db_);
  ExpectRefusedBeside(*first, kLockService, "127.0.0.1:0", db_);

  for (int i = 1; i <= 12; ++i) {
    std::unique_ptr<client::LockClient> fresh =
        Connected<client::LockClient>(first->address());
    ASSERT_NE(fresh, nullptr);
    absl::StatusOr<client::AcquireOutcome> outcome =
        fresh->Acquire("dup", absl::StrCat("h", i), WithTtl(absl::Seconds(60)));
    ASSERT_THAT(outcome, IsOk());
    EXPECT_FALSE(outcome->acquired) << "h" << i << " got token " << outcome->token;
    EXPECT_EQ(outcome->holder_token, held->token);
  }
  absl::StatusOr<client::LockState> state = lock->Describe("dup");
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->holder, "h0");
  EXPECT_EQ(state->holders, 1u);
  EXPECT_THAT(first->Terminate(), IsOk());
}

TEST_F(SecondInstanceTest, ASecondGatewayOnOneDatabaseExitsAndTheFirstServesOn) {
  std::unique_ptr<testing::ServerProcess> first = StartFirst(kGateway, "objects.db");
  ASSERT_NE(first, nullptr);
  std::unique_ptr<client::GatewayClient> gateway =
      Connected<client::GatewayClient>(first->address());
  ASSERT_NE(gateway, nullptr);
  ASSERT_THAT(gateway->Put(Fenced(5), "count", "1"), IsOk());

  ExpectRefusedBeside(*first, kGateway, "127.0.0.1:0", db_);

  // The first still fences: its fence for "orders" is 5.
  EXPECT_THAT(gateway->Put(Fenced(4), "count", "2"),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(gateway->Put(Fenced(6), "count", "3"), IsOk());
  EXPECT_THAT(first->Terminate(), IsOk());
}

// kill -9 leaves no lock behind: the next server on the state serves at
// once, with every lease the first had granted.
TEST_F(SecondInstanceTest, AfterAKillNineTheNextLockServiceServesAtOnceWithEveryLease) {
  std::unique_ptr<testing::ServerProcess> first = StartFirst(kLockService, "locks.db");
  ASSERT_NE(first, nullptr);
  const std::vector<std::string> resources = {"a", "b", "c"};
  std::vector<uint64_t> tokens;
  {
    std::unique_ptr<client::LockClient> lock =
        Connected<client::LockClient>(first->address());
    ASSERT_NE(lock, nullptr);
    for (const std::string& resource : resources) {
      absl::StatusOr<client::AcquireOutcome> outcome =
          lock->Acquire(resource, "holder", WithTtl(absl::Seconds(120)));
      ASSERT_THAT(outcome, IsOk());
      ASSERT_TRUE(outcome->acquired);
      tokens.push_back(outcome->token);
    }
  }
  std::unique_ptr<testing::ServerProcess> next =
      KillAndStartNext(*first, kLockService, dir_, db_);
  ASSERT_NE(next, nullptr);
  std::unique_ptr<client::LockClient> lock =
      Connected<client::LockClient>(next->address());
  ASSERT_NE(lock, nullptr);
  for (size_t i = 0; i < resources.size(); ++i) {
    absl::StatusOr<client::LockState> state = lock->Describe(resources[i]);
    ASSERT_THAT(state, IsOk());
    EXPECT_TRUE(state->held) << resources[i];
    EXPECT_EQ(state->holder, "holder");
    EXPECT_EQ(state->token, tokens[i]);
  }
  EXPECT_THAT(next->Terminate(), IsOk());
}

TEST_F(SecondInstanceTest, AfterAKillNineTheNextGatewayServesAtOnce) {
  std::unique_ptr<testing::ServerProcess> first = StartFirst(kGateway, "objects.db");
  ASSERT_NE(first, nullptr);
  {
    std::unique_ptr<client::GatewayClient> gateway =
        Connected<client::GatewayClient>(first->address());
    ASSERT_NE(gateway, nullptr);
    ASSERT_THAT(gateway->Put(Fenced(7), "count", "1"), IsOk());
  }
  std::unique_ptr<testing::ServerProcess> next =
      KillAndStartNext(*first, kGateway, dir_, db_);
  ASSERT_NE(next, nullptr);
  std::unique_ptr<client::GatewayClient> gateway =
      Connected<client::GatewayClient>(next->address());
  ASSERT_NE(gateway, nullptr);
  EXPECT_THAT(gateway->Put(Fenced(6), "count", "2"),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(next->Terminate(), IsOk());
}

// --- no shared ports -------------------------------------------------------

// For each server: a first one on a state of its own, then a second on
// another state whose `flag` (--listen or --metrics_listen) asks for the
// address `taken` reports of the first: the second must exit 1 saying it
// cannot listen there, naming the flag.
void ExpectATakenPortRefused(
    const std::string& flag,
    absl::FunctionRef<absl::StatusOr<std::string>(testing::ServerProcess&)> taken) {
  for (const char* binary : {kLockService, kGateway}) {
    SCOPED_TRACE(binary);
    testing::TempDir dir;
    std::unique_ptr<testing::ServerProcess> first =
        StartOnState(binary, dir, dir.File("first.db"), "first");
    ASSERT_NE(first, nullptr);
    absl::StatusOr<std::string> address = taken(*first);
    ASSERT_THAT(address, IsOk());
    const bool grpc = flag == "--listen";
    const testing::ProgramResult second = RunToEnd(
        {binary, "--listen=" + (grpc ? *address : "127.0.0.1:0"),
         "--db=" + dir.File("second.db"), "--metrics_listen=" + (grpc ? "" : *address)});
    EXPECT_EQ(second.exit_code, 1);
    EXPECT_THAT(second.stderr_text, HasSubstr("cannot listen on " + *address));
    EXPECT_THAT(second.stderr_text, HasSubstr(flag));
    EXPECT_THAT(first->Terminate(), IsOk());
  }
}

TEST_F(SecondInstanceTest, ASecondServerOnATakenGrpcPortFailsNamingThePort) {
  ExpectATakenPortRefused("--listen", [](testing::ServerProcess& first) {
    return absl::StatusOr<std::string>(first.address());
  });
}

TEST_F(SecondInstanceTest, ASecondServerOnATakenMetricsPortFailsNamingThePort) {
  ExpectATakenPortRefused(
      "--metrics_listen",
      [](testing::ServerProcess& first) -> absl::StatusOr<std::string> {
        absl::StatusOr<int> metrics_port = first.MetricsPort();
        if (!metrics_port.ok()) return metrics_port.status();
        return absl::StrCat("127.0.0.1:", *metrics_port);
      });
}

// --metrics_listen=auto on a fixed gRPC port asks for the server's default
// metrics port (9464, 9465); two servers of one kind on one host then get
// two ports, and the second's start-up line and port file say which.
TEST_F(SecondInstanceTest, MetricsListenAutoTakesAFreePortWhenTheDefaultIsTaken) {
  for (const char* binary : {kLockService, kGateway}) {
    SCOPED_TRACE(binary);
    testing::TempDir dir;
    std::vector<std::unique_ptr<testing::ServerProcess>> servers;
    for (const char* name : {"first", "second"}) {
      absl::StatusOr<int> port = testing::PickFreePort();
      ASSERT_THAT(port, IsOk());
      absl::StatusOr<std::unique_ptr<testing::ServerProcess>> server =
          testing::ServerProcess::Start(
              binary, {"--db=" + dir.File(absl::StrCat(name, ".db")), "--metrics_listen=auto"},
              dir.path(), name, *port);
      ASSERT_THAT(server, IsOk());
      servers.push_back(*std::move(server));
    }
    absl::StatusOr<int> first_port = servers[0]->MetricsPort();
    absl::StatusOr<int> second_port = servers[1]->MetricsPort();
    ASSERT_THAT(first_port, IsOk());
    ASSERT_THAT(second_port, IsOk());
    EXPECT_NE(*first_port, *second_port);
    // Whoever has the default port now (the first, or another process),
    // the second did not get it and says so.
    const std::string auto_port =
        absl::EndsWith(binary, "gateway") ? "127.0.0.1:9465" : "127.0.0.1:9464";
    EXPECT_THAT(servers[1]->WaitForLog(absl::StrCat(
                    "metrics=http://127.0.0.1:", *second_port, "/ (auto: ", auto_port,
                    " was taken)")),
                IsOk());
    for (auto& server : servers) EXPECT_THAT(server->Terminate(), IsOk());
  }
}

}  // namespace
}  // namespace fencegate
