// The real fencegate-lockservice binary, on 127.0.0.1 port 0, driven over
// gRPC. No sleeps: every wait polls a condition under a deadline.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/integration/lockservice_process_fixture.h"
#include "tests/testing/health_check.h"
#include "tests/testing/own_channel.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::StatusIs;

class LockServiceTest : public testing::LockServiceProcessTest {
 protected:
  absl::StatusOr<v1::AcquireResponse> Acquire(v1::LockService::Stub& stub,
                                              const std::string& resource,
                                              const std::string& holder,
                                              int64_t ttl_ms = 60000,
                                              int64_t wait_ms = 0) {
    grpc::ClientContext ctx;
    SetDeadline(ctx, absl::Milliseconds(wait_ms) + absl::Seconds(30));
    v1::AcquireRequest req;
    req.set_resource(resource);
    req.set_holder(holder);
    req.set_ttl_ms(ttl_ms);
    req.set_wait_ms(wait_ms);
    v1::AcquireResponse resp;
    grpc::Status s = stub.Acquire(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  }
};

TEST_F(LockServiceTest, ConcurrentClientsNeverHoldTheSameResourceTogether) {
  StartServer();
  constexpr int kThreads = 16;
  constexpr int kRounds = 40;
  constexpr int kResources = 3;
  std::atomic<int> owner[kResources] = {};
  std::atomic<int> overlaps{0}, errors{0}, grants{0};
  absl::Mutex first_error_mu;
  std::string first_error;  // what the first failed call said, for the report
  auto record_error = [&](const std::string& what) {
    ++errors;
    absl::MutexLock lock(&first_error_mu);
    if (first_error.empty()) first_error = what;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // One connection per client thread, as separate processes would have.
      auto channel = testing::OwnChannel(server_->address());
      if (!channel.ok()) {
        for (int i = 0; i < kRounds; ++i) record_error(channel.status().ToString());
        return;
      }
      auto stub = v1::LockService::NewStub(*channel);
      for (int i = 0; i < kRounds; ++i) {
        const int r = (t + i) % kResources;
        const std::string resource = absl::StrCat("mutex-", r);
        auto lease = Acquire(*stub, resource, absl::StrCat("client-", t), 60000, 60000);
        if (!lease.ok() || !lease->acquired()) {
          record_error(lease.ok() ? "acquire: not acquired" : lease.status().ToString());
          continue;
        }
        ++grants;
        if (owner[r].exchange(t + 1) != 0) ++overlaps;
        // Inside the critical section: the lock must not be anyone else's.
        if (owner[r].exchange(0) != t + 1) ++overlaps;
        if (absl::Status s = Release(*stub, resource, lease->token()); !s.ok()) {
          record_error(s.ToString());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(errors.load(), 0) << "first error: " << first_error;
  EXPECT_EQ(grants.load(), kThreads * kRounds);
}

TEST_F(LockServiceTest, KillNineMidLoadThenRestartKeepsTokensAndLeases) {
  StartServer();
  // A lease held at the crash, never released.
  auto held = Acquire(*stub_, "held-at-crash", "survivor", 60000);
  ASSERT_TRUE(held.ok() && held->acquired());

  std::atomic<uint64_t> max_returned(held->token());
  std::atomic<int> acknowledged{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int t = 0; t < 4; ++t) {
    load.emplace_back([&, t] {
      auto stub = v1::LockService::NewStub(channel_);
      for (int i = 0; i < 100000 && !stop.load(); ++i) {
        auto lease = Acquire(*stub, absl::StrCat("load-", t, "-", i % 7), "loader");
        if (!lease.ok()) break;  // the server is gone
        uint64_t seen = max_returned.load();
        while (lease->token() > seen && !max_returned.compare_exchange_weak(seen, lease->token())) {
        }
        ++acknowledged;
        if (!Release(*stub, absl::StrCat("load-", t, "-", i % 7), lease->token()).ok()) break;
      }
    });
  }
  // Kill once the load is well under way.
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (acknowledged.load() < 300 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));  // poll interval, under a deadline
  }
  ASSERT_GE(acknowledged.load(), 300) << "load did not get going";
  server_->Kill();
  stop = true;
  for (auto& th : load) th.join();
  const uint64_t max_before = max_returned.load();

  StartServer();  // same db file
  auto survivor = Describe("held-at-crash");
  ASSERT_TRUE(survivor.ok()) << survivor.status();
  EXPECT_TRUE(survivor->held());
  EXPECT_EQ(survivor->holder(), "survivor");
  EXPECT_EQ(survivor->token(), held->token());
  EXPECT_GT(survivor->remaining_ms(), 50000);  // re-armed for its full TTL
  auto intruder = Acquire(*stub_, "held-at-crash", "intruder");
  ASSERT_TRUE(intruder.ok());
  EXPECT_FALSE(intruder->acquired());
  EXPECT_EQ(intruder->holder_token(), held->token());

  for (int i = 0; i < 50; ++i) {
    auto fresh = Acquire(*stub_, absl::StrCat("after-", i), "h");
    ASSERT_TRUE(fresh.ok() && fresh->acquired());
    EXPECT_GT(fresh->token(), max_before) << "token reused after a crash";
  }
}

// One parked Acquire, made with the callback API so that thousands can be
// outstanding from one test thread.
struct ParkedCall {
  grpc::ClientContext ctx;
  v1::AcquireRequest request;
  v1::AcquireResponse response;
  grpc::Status status;
};

TEST_F(LockServiceTest, FiveThousandParkedWaitersUseBoundedThreadsAndGoInOrder) {
  StartServer();
  constexpr int kWaiters = 5000;
  auto holder = Acquire(*stub_, "hot", "first", 60000);
  ASSERT_TRUE(holder.ok() && holder->acquired());
  ASSERT_OK_AND_ASSIGN(int idle_threads, server_->ThreadCount());

  absl::Mutex mu;
  std::deque<int> granted;  // waiter indexes, in grant order
  std::vector<std::unique_ptr<ParkedCall>> calls;
  calls.reserve(kWaiters);
  for (int i = 0; i < kWaiters; ++i) {
    auto call = std::make_unique<ParkedCall>();
    SetDeadline(call->ctx, absl::Minutes(5));
    call->request.set_resource("hot");
    call->request.set_holder(absl::StrCat("waiter-", i));
    call->request.set_ttl_ms(60000);
    call->request.set_wait_ms(240000);
    ParkedCall* raw = call.get();
    stub_->async()->Acquire(&raw->ctx, &raw->request, &raw->response,
                            [raw, i, &mu, &granted](grpc::Status s) {
                              raw->status = s;
                              absl::MutexLock lock(&mu);
                              granted.push_back(i);
                            });
    calls.push_back(std::move(call));
    // Arrival order is what the server saw: send the next only once this
    // one is queued.
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    for (;;) {
      auto d = Describe("hot");
      ASSERT_TRUE(d.ok()) << d.status();
      if (d->waiters() == static_cast<uint32_t>(i + 1)) break;
      ASSERT_LT(absl::Now(), give_up) << "waiter " << i << " never queued";
    }
  }
  ASSERT_OK_AND_ASSIGN(int parked_threads, server_->ThreadCount());
  std::cerr << "server threads: " << idle_threads << " idle, " << parked_threads
            << " with " << kWaiters << " parked waiters\n";
  EXPECT_LE(parked_threads, idle_threads + 8);
  EXPECT_LE(parked_threads, 64);

  // Hand the lock down the queue: each waiter releases as soon as granted.
  ASSERT_TRUE(Release(*stub_, "hot", holder->token()).ok());
  uint64_t last_token = holder->token();
  for (int expected = 0; expected < kWaiters; ++expected) {
    int index = -1;
    {
      absl::MutexLock lock(&mu);
      auto has_grant = [&granted] { return !granted.empty(); };
      ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&has_grant), absl::Seconds(30)))
          << "no grant after waiter " << expected - 1;
      index = granted.front();
      granted.pop_front();
    }
    ParkedCall& call = *calls[index];
    ASSERT_TRUE(call.status.ok()) << index << ": " << call.status.error_message();
    ASSERT_TRUE(call.response.acquired()) << index;
    ASSERT_EQ(index, expected) << "granted out of arrival order";
    ASSERT_GT(call.response.token(), last_token);
    last_token = call.response.token();
    ASSERT_TRUE(Release(*stub_, "hot", last_token).ok());
  }
}

TEST_F(LockServiceTest, SigtermEndsParkedWaitersAndExitsCleanly) {
  StartServer();
  auto holder = Acquire(*stub_, "r", "holder");
  ASSERT_TRUE(holder.ok() && holder->acquired());
  ParkedCall call;
  SetDeadline(call.ctx, absl::Minutes(2));
  call.request.set_resource("r");
  call.request.set_holder("waiter");
  call.request.set_ttl_ms(1000);
  call.request.set_wait_ms(60000);
  absl::Notification done;
  stub_->async()->Acquire(&call.ctx, &call.request, &call.response,
                          [&](grpc::Status s) {
                            call.status = s;
                            done.Notify();
                          });
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (Describe("r")->waiters() != 1) ASSERT_LT(absl::Now(), give_up);

  EXPECT_TRUE(server_->Terminate().ok()) << server_->LogTail();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(call.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(server_->LogTail(), ::testing::HasSubstr("stopped cleanly"));
}

TEST_F(LockServiceTest, ErrorsCarryTheirDetailOverTheWire) {
  StartServer({"--min_ttl=50ms", "--max_ttl=10s"});
  auto first = Acquire(*stub_, "r", "alice", 60);
  ASSERT_TRUE(first.ok() && first->acquired());
  // Let the 60 ms lease lapse (polling the server, not sleeping).
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (Describe("r")->held()) ASSERT_LT(absl::Now(), give_up);
  auto second = Acquire(*stub_, "r", "bob", 10000);
  ASSERT_TRUE(second.ok() && second->acquired());

  grpc::ClientContext ctx;
  v1::RenewRequest renew;
  renew.set_resource("r");
  renew.set_token(first->token());
  renew.set_ttl_ms(1000);
  v1::RenewResponse renewed;
  absl::Status stale = FromGrpcStatus(stub_->Renew(&ctx, renew, &renewed));
  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted));
  std::optional<ErrorInfo> info = GetErrorInfo(stale);
  ASSERT_TRUE(info.has_value()) << "no ErrorDetail in grpc-status-details-bin";
  EXPECT_EQ(info->reason, ErrorReason::kLeaseLost);
  EXPECT_EQ(info->current_token, second->token());

  // The server's own flag limits apply and are named.
  auto too_long = Acquire(*stub_, "x", "h", 20000);
  EXPECT_THAT(too_long, StatusIs(absl::StatusCode::kInvalidArgument,
                                 ::testing::HasSubstr("between 50 and 10000")));
  EXPECT_EQ(GetErrorInfo(too_long.status())->field, "ttl_ms");

  // A name that is not UTF-8 gets a clear answer naming the field, not a
  // parse failure (names are `bytes` on the wire for this reason).
  auto not_utf8 = Acquire(*stub_, std::string("bad\xff", 4), "h", 1000);
  EXPECT_THAT(not_utf8, StatusIs(absl::StatusCode::kInvalidArgument,
                                 ::testing::HasSubstr("UTF-8")));
  EXPECT_EQ(GetErrorInfo(not_utf8.status())->field, "resource");

  // A field this server does not know is refused, not ignored.
  grpc::ClientContext ctx2;
  v1::AcquireRequest unknown;
  unknown.set_resource("y");
  unknown.set_holder("h");
  unknown.set_ttl_ms(1000);
  unknown.GetReflection()->MutableUnknownFields(&unknown)->AddVarint(42, 7);
  v1::AcquireResponse resp;
  EXPECT_EQ(stub_->Acquire(&ctx2, unknown, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(Describe("y")->held());
}

TEST_F(LockServiceTest, HealthServiceAnswersServing) {
  StartServer();
  ASSERT_OK_AND_ASSIGN(testing::Serving serving, testing::HealthStatus(channel_));
  EXPECT_EQ(serving, testing::Serving::kServing);
}

TEST_F(LockServiceTest, WaiterWhoseClientGaveUpLeavesTheQueue) {
  StartServer();
  auto holder = Acquire(*stub_, "r", "holder");
  ASSERT_TRUE(holder.ok() && holder->acquired());
  // The client's deadline is far shorter than the wait it asked for.
  grpc::ClientContext ctx;
  SetDeadline(ctx, absl::Milliseconds(300));
  v1::AcquireRequest req;
  req.set_resource("r");
  req.set_holder("impatient");
  req.set_ttl_ms(60000);
  req.set_wait_ms(120000);
  v1::AcquireResponse resp;
  EXPECT_EQ(stub_->Acquire(&ctx, req, &resp).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (Describe("r")->waiters() != 0) {
    ASSERT_LT(absl::Now(), give_up) << "cancelled waiter still queued";
  }
  // And it is not granted the lock when the holder releases.
  ASSERT_TRUE(Release(*stub_, "r", holder->token()).ok());
  EXPECT_FALSE(Describe("r")->held());
}

}  // namespace
}  // namespace fencegate
