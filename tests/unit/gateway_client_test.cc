// The client library's GatewayClient against an in-process gateway and lock
// service on port 0, both checking signed tokens: a Lease's token and
// signature ride on every call, the first use of a new lease raises the
// fence, and refusals come back as typed errors carrying the gateway's
// current token. Every test runs over both transports (one unary call per
// operation, and the gateway's Session stream); the stream's own behaviour
// (many threads on one stream, pipelining, a stream that ends) is tested
// at the end.
#include "fencegate/client/gateway_client.h"

#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"
#include "gateway/gateway_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/free_port.h"
#include "harness/temp_dir.h"
#include "lockservice/server/lock_server.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;

class GatewayClientTest : public ::testing::TestWithParam<Transport> {
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
    // Not port 0: a test restarts the gateway on its port, which no port-0
    // listener or outgoing connection can take below the ephemeral range.
    ASSERT_OK_AND_ASSIGN(const int port, ::fencegate::testing::PickFreePort());
    gateway_options.serving.listen = absl::StrCat("127.0.0.1:", port);
    gateway_options.db_path = dir_.File("gateway.db");
    gateway_options.serving.signing_keys_path = dir_.File("keys.txt");
    auto gateway = gateway::GatewayServer::Start(gateway_options);
    ASSERT_THAT(gateway, IsOk());
    gateway_ = *std::move(gateway);

    auto lock = LockClient::Connect(absl::StrCat("127.0.0.1:", locks_->port()));
    ASSERT_THAT(lock, IsOk());
    lock_ = *std::move(lock);
    ClientOptions options;
    options.gateway_transport = GetParam();
    auto client =
        GatewayClient::Connect(absl::StrCat("127.0.0.1:", gateway_->port()), options);
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

TEST_P(GatewayClientTest, StaleTokenIsATypedErrorCarryingTheGatewaysToken) {
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

TEST_P(GatewayClientTest, VersionMismatchIsTypedWithTheCurrentVersion) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  ASSERT_OK_AND_ASSIGN(WriteResult first, client_->Put(*lease, "k", "1"));
  ASSERT_OK_AND_ASSIGN(WriteResult second, client_->Put(*lease, "k", "2", first.version));
  absl::StatusOr<WriteResult> lost = client_->Put(*lease, "k", "3", first.version);
  EXPECT_TRUE(IsVersionMismatch(lost.status())) << lost.status();
  EXPECT_EQ(CurrentVersion(lost.status()), second.version);
  EXPECT_EQ(CurrentToken(lost.status()), lease->token());
}

TEST_P(GatewayClientTest, FirstUseOfANewLeaseRaisesTheFenceEvenForAList) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  ASSERT_OK_AND_ASSIGN(ResourceSummary before, client_->Describe("r"));
  EXPECT_EQ(before.max_token, 0u);
  // List carries no token on the wire; the client fences first.
  ASSERT_THAT(client_->List(*lease), IsOk());
  ASSERT_OK_AND_ASSIGN(ResourceSummary after, client_->Describe("r"));
  EXPECT_EQ(after.max_token, lease->token());
}

TEST_P(GatewayClientTest, TheLeasesSignatureRidesAlongAndAForgedOneIsTyped) {
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

// A shared lease's token (signed here as the lock service signs it) rides
// with its mode: it reads without moving the fence, cannot write, and its
// signature does not pass for an exclusive token's; a permit's is refused.
TEST_P(GatewayClientTest, TheModeRidesWithTheTokenOnEveryCall) {
  std::unique_ptr<Lease> writer = MustLease("r", "alice");
  ASSERT_THAT(client_->Put(*writer, "k", "v"), IsOk());
  std::ifstream key_file(dir_.File("keys.txt"));
  const std::string key_text((std::istreambuf_iterator<char>(key_file)),
                             std::istreambuf_iterator<char>());
  absl::StatusOr<KeyRing> keys = KeyRing::Parse(key_text, "keys.txt");
  ASSERT_THAT(keys, IsOk());
  const TokenSigner signer(*std::move(keys));
  const uint64_t token = writer->token() + 100;
  absl::StatusOr<TokenSignature> shared_signature =
      signer.Sign("r", token, LeaseMode::kShared);
  ASSERT_THAT(shared_signature, IsOk());
  const Fencing shared{"r", token, *shared_signature, LeaseMode::kShared};

  ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(shared, "k"));
  EXPECT_EQ(read.value, "v");
  EXPECT_EQ(read.max_token, writer->token());
  ASSERT_OK_AND_ASSIGN(ResourceSummary summary, client_->Describe("r"));
  EXPECT_EQ(summary.max_token, writer->token());  // the shared read moved nothing

  absl::StatusOr<WriteResult> write = client_->Put(shared, "k", "x");
  EXPECT_EQ(write.status().code(), absl::StatusCode::kInvalidArgument) << write.status();
  EXPECT_THAT(write.status().message(), ::testing::HasSubstr("cannot write"));
  EXPECT_EQ(client_->Fence(shared).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<ReadResult> as_exclusive =
      client_->Read({"r", token, *shared_signature}, "k");
  EXPECT_TRUE(IsBadSignature(as_exclusive.status())) << as_exclusive.status();
  const Fencing permit{"r", token, *shared_signature, LeaseMode::kPermit};
  EXPECT_EQ(client_->Read(permit, "k").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Nothing of it moved the fence: the writer still writes.
  EXPECT_THAT(client_->Put(*writer, "k", "w"), IsOk());
}

INSTANTIATE_TEST_SUITE_P(Transports, GatewayClientTest,
                         ::testing::Values(Transport::kUnary,
                                           Transport::kStream),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kUnary ? "Unary"
                                                                         : "Stream";
                         });

// The Session stream's own behaviour.
using GatewayClientStreamTest = GatewayClientTest;

TEST_P(GatewayClientStreamTest, ThreadsShareTheStreamAndEveryWriteIsAppliedOnce) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  constexpr int kThreads = 8;
  constexpr int kWrites = 40;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> versions(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        absl::StatusOr<WriteResult> written =
            client_->Put(*lease, absl::StrCat("k", t), absl::StrCat(i));
        EXPECT_THAT(written, IsOk());
        if (written.ok()) versions[t].push_back(written->version);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // The resource's versions 1..N, one per write (none applied twice, none
  // lost), rising in the order each thread wrote.
  std::set<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(versions[t].size(), static_cast<size_t>(kWrites));
    for (int i = 1; i < kWrites; ++i) EXPECT_LT(versions[t][i - 1], versions[t][i]);
    all.insert(versions[t].begin(), versions[t].end());
    ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(*lease, absl::StrCat("k", t)));
    EXPECT_EQ(read.value, absl::StrCat(kWrites - 1));
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kWrites));
  EXPECT_EQ(*all.rbegin(), static_cast<uint64_t>(kThreads * kWrites));
}

TEST_P(GatewayClientStreamTest, PipelinedPutsOnOneResourceCommitInSendOrder) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  std::vector<std::future<absl::StatusOr<WriteResult>>> in_flight;
  for (int i = 0; i < 64; ++i) {
    in_flight.push_back(client_->PutAsync(FencingOf(*lease), "k", absl::StrCat(i)));
  }
  for (int i = 0; i < 64; ++i) {
    absl::StatusOr<WriteResult> written = in_flight[i].get();
    ASSERT_THAT(written, IsOk());
    EXPECT_EQ(written->version, static_cast<uint64_t>(i + 1));
  }
  ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(*lease, "k"));
  EXPECT_EQ(read.value, "63");
}

TEST_P(GatewayClientStreamTest, AnAsyncPutsRefusalIsTypedAndTheStreamGoesOn) {
  std::unique_ptr<Lease> first = MustLease("r", "alice");
  const Fencing old = FencingOf(*first);
  first.reset();
  std::unique_ptr<Lease> second = MustLease("r", "bob");
  ASSERT_THAT(client_->Put(*second, "k", "bob"), IsOk());
  absl::StatusOr<WriteResult> late = client_->PutAsync(old, "k", "alice").get();
  EXPECT_TRUE(IsStaleToken(late.status())) << late.status();
  EXPECT_EQ(CurrentToken(late.status()), second->token());
  EXPECT_THAT(client_->PutAsync(FencingOf(*second), "k", "bob again").get(), IsOk());
}

TEST_P(GatewayClientStreamTest, AfterTheGatewayRestartsANewStreamCarriesTheCalls) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  ASSERT_THAT(client_->Put(*lease, "k", "before"), IsOk());
  const int port = gateway_->port();
  gateway_->Shutdown();
  gateway_.reset();
  gateway::GatewayServerOptions options;
  options.serving.listen = absl::StrCat("127.0.0.1:", port);
  options.db_path = dir_.File("gateway.db");
  options.serving.signing_keys_path = dir_.File("keys.txt");
  auto gateway = gateway::GatewayServer::Start(options);
  ASSERT_THAT(gateway, IsOk());
  gateway_ = *std::move(gateway);
  // The stream the client had ended with the old server; the call is
  // retried on a new one.
  ASSERT_THAT(client_->Put(*lease, "k", "after"), IsOk());
  ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(*lease, "k"));
  EXPECT_EQ(read.value, "after");
}

TEST_P(GatewayClientStreamTest, WriteAsyncClosedLoopsRunInsideTheirCallbacks) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  const Fencing fencing = FencingOf(*lease);
  // Eight loops, each with one write in flight, the next sent from the
  // last one's callback: no thread per loop.
  constexpr int kLoops = 8, kEach = 25;
  struct Loops {
    absl::Mutex mu;
    std::vector<uint64_t> last ABSL_GUARDED_BY(mu) = std::vector<uint64_t>(kLoops);
    absl::Status failed ABSL_GUARDED_BY(mu);
    int running ABSL_GUARDED_BY(mu) = kLoops;
    absl::Notification done;
  } loops;
  std::function<void(int, int)> next = [&](int loop, int i) {
    client_->WriteAsync(fencing,
                        Mutation{absl::StrCat("k", loop), absl::StrCat(i), std::nullopt},
                        [&, loop, i](absl::StatusOr<WriteResult> written) {
                          {
                            absl::MutexLock lock(&loops.mu);
                            if (!written.ok()) loops.failed = written.status();
                            if (written.ok() && i + 1 < kEach) {
                              // Versions rise along a loop: its writes committed in
                              // order.
                              EXPECT_GT(written->version, loops.last[loop]);
                              loops.last[loop] = written->version;
                            } else {
                              if (--loops.running == 0) loops.done.Notify();
                              return;
                            }
                          }
                          next(loop, i + 1);
                        });
  };
  for (int loop = 0; loop < kLoops; ++loop) next(loop, 0);
  ASSERT_TRUE(loops.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  {
    absl::MutexLock lock(&loops.mu);
    ASSERT_TRUE(loops.failed.ok()) << loops.failed;
  }
  for (int loop = 0; loop < kLoops; ++loop) {
    ASSERT_OK_AND_ASSIGN(ReadResult read, client_->Read(*lease, absl::StrCat("k", loop)));
    EXPECT_EQ(read.value, absl::StrCat(kEach - 1));
  }
}

TEST_P(GatewayClientStreamTest, DestroyingTheClientAnswersEveryCallInFlight) {
  std::unique_ptr<Lease> lease = MustLease("r", "alice");
  std::vector<std::future<absl::StatusOr<WriteResult>>> in_flight;
  for (int i = 0; i < 32; ++i) {
    in_flight.push_back(client_->PutAsync(FencingOf(*lease), absl::StrCat("k", i), "v"));
  }
  client_.reset();
  for (auto& future : in_flight) {
    absl::StatusOr<WriteResult> written = future.get();  // never left hanging
    if (!written.ok()) {
      EXPECT_TRUE(absl::IsCancelled(written.status())) << written.status();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stream, GatewayClientStreamTest,
                         ::testing::Values(Transport::kStream));

}  // namespace
}  // namespace fencegate::client
