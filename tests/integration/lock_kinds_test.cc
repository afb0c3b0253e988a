// Kinds of lock (docs/semantics.md) on the real fencegate-lockservice
// binary, over gRPC: shared leases held together and an exclusive one
// after them, a semaphore of N permits, Describe's mode, the
// --max_holders_per_resource flag, and the same on the Session stream.
// Only try-locks (wait 0): nothing waits, nothing sleeps.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The field an INVALID_ARGUMENT names in its ErrorInfo ("" if none).
std::string FieldOf(const absl::Status& status) {
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  return info.has_value() ? info->field : "";
}

class LockKindsTest : public testing::LockServiceProcessTest {
 protected:
  // A try-lock of `mode` (a v1::LeaseMode, or any number).
  absl::StatusOr<v1::AcquireResponse> Acquire(const std::string& resource,
                                              const std::string& holder, int mode,
                                              uint32_t permits = 0) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::AcquireRequest request;
    request.set_resource(resource);
    request.set_holder(holder);
    request.set_ttl_ms(60000);
    request.set_mode(static_cast<v1::LeaseMode>(mode));
    request.set_permits(permits);
    v1::AcquireResponse response;
    grpc::Status status = stub_->Acquire(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  // The token of a granted try-lock; 0 (and a failure) otherwise.
  uint64_t Granted(const std::string& resource, const std::string& holder, int mode,
                   uint32_t permits = 0) {
    absl::StatusOr<v1::AcquireResponse> r = Acquire(resource, holder, mode, permits);
    EXPECT_THAT(r, IsOk());
    if (!r.ok()) return 0;
    EXPECT_TRUE(r->acquired()) << holder << ": " << r->ShortDebugString();
    return r->acquired() ? r->token() : 0;
  }
};

TEST_F(LockKindsTest, SharedHoldersTogetherThenAnExclusiveOneWithALargerToken) {
  StartServer();
  const uint64_t a = Granted("doc", "reader-a", v1::LEASE_MODE_SHARED);
  const uint64_t b = Granted("doc", "reader-b", v1::LEASE_MODE_SHARED);
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  EXPECT_NE(a, b);
  ASSERT_OK_AND_ASSIGN(v1::DescribeResponse shared, Describe("doc"));
  EXPECT_TRUE(shared.held());
  EXPECT_EQ(shared.mode(), v1::LEASE_MODE_SHARED);
  EXPECT_EQ(shared.holders(), 2u);
  EXPECT_EQ(shared.token(), std::min(a, b));  // the oldest lease
  EXPECT_EQ(shared.holder(), a < b ? "reader-a" : "reader-b");

  ASSERT_OK_AND_ASSIGN(v1::AcquireResponse writer,
                       Acquire("doc", "writer", v1::LEASE_MODE_EXCLUSIVE));
  EXPECT_FALSE(writer.acquired());
  EXPECT_EQ(writer.reason(), v1::AcquireResponse::HELD);
  EXPECT_EQ(writer.token(), 0u);

  ASSERT_THAT(Release("doc", a), IsOk());
  ASSERT_OK_AND_ASSIGN(shared, Describe("doc"));
  EXPECT_EQ(shared.holders(), 1u);
  EXPECT_EQ(shared.token(), b);
  ASSERT_THAT(Release("doc", b), IsOk());
  ASSERT_OK_AND_ASSIGN(v1::DescribeResponse free, Describe("doc"));
  EXPECT_FALSE(free.held());
  EXPECT_EQ(free.mode(), v1::LEASE_MODE_EXCLUSIVE);
  EXPECT_EQ(free.holders(), 0u);

  const uint64_t w = Granted("doc", "writer", v1::LEASE_MODE_EXCLUSIVE);
  EXPECT_GT(w, std::max(a, b));
  ASSERT_OK_AND_ASSIGN(v1::DescribeResponse exclusive, Describe("doc"));
  EXPECT_EQ(exclusive.mode(), v1::LEASE_MODE_EXCLUSIVE);
  EXPECT_EQ(exclusive.holders(), 1u);
  EXPECT_EQ(exclusive.token(), w);
  EXPECT_EQ(exclusive.holder(), "writer");
}

TEST_F(LockKindsTest, ASemaphoreOfTwoGrantsTwoPermitsAndKeepsItsSize) {
  StartServer();
  const uint64_t p1 = Granted("pool", "worker-1", v1::LEASE_MODE_PERMIT, 2);
  const uint64_t p2 = Granted("pool", "worker-2", v1::LEASE_MODE_PERMIT, 2);
  ASSERT_NE(p1, 0u);
  ASSERT_NE(p2, 0u);
  EXPECT_NE(p1, p2);
  ASSERT_OK_AND_ASSIGN(v1::AcquireResponse third,
                       Acquire("pool", "worker-3", v1::LEASE_MODE_PERMIT, 2));
  EXPECT_FALSE(third.acquired());
  EXPECT_EQ(third.reason(), v1::AcquireResponse::HELD);

  // Another size, or another way of use, while it is in use.
  absl::StatusOr<v1::AcquireResponse> resized =
      Acquire("pool", "worker-3", v1::LEASE_MODE_PERMIT, 3);
  EXPECT_THAT(resized,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permits")));
  EXPECT_EQ(FieldOf(resized.status()), "permits");
  for (int mode : {v1::LEASE_MODE_SHARED, v1::LEASE_MODE_EXCLUSIVE}) {
    absl::StatusOr<v1::AcquireResponse> other = Acquire("pool", "reader", mode);
    EXPECT_THAT(other, StatusIs(absl::StatusCode::kInvalidArgument)) << mode;
    EXPECT_EQ(FieldOf(other.status()), "mode") << other.status();
  }

  ASSERT_OK_AND_ASSIGN(v1::DescribeResponse semaphore, Describe("pool"));
  EXPECT_TRUE(semaphore.held());
  EXPECT_EQ(semaphore.mode(), v1::LEASE_MODE_PERMIT);
  EXPECT_EQ(semaphore.permits(), 2u);
  EXPECT_EQ(semaphore.holders(), 2u);
  EXPECT_EQ(semaphore.token(), std::min(p1, p2));

  // A permit freed is a permit to take.
  ASSERT_THAT(Release("pool", p1), IsOk());
  EXPECT_GT(Granted("pool", "worker-3", v1::LEASE_MODE_PERMIT, 2), p2);
}

TEST_F(LockKindsTest, BadModesAndPermitsAreInvalidArgumentNamingTheField) {
  StartServer();
  struct Case {
    int mode;
    uint32_t permits;
    const char* field;
  };
  for (const Case& c : {Case{3, 0, "mode"}, Case{-1, 0, "mode"}, Case{1000, 2, "mode"},
                        Case{v1::LEASE_MODE_PERMIT, 0, "permits"},
                        Case{v1::LEASE_MODE_PERMIT, 10001, "permits"},
                        Case{v1::LEASE_MODE_SHARED, 2, "permits"},
                        Case{v1::LEASE_MODE_EXCLUSIVE, 1, "permits"}}) {
    absl::StatusOr<v1::AcquireResponse> r = Acquire("bad", "alice", c.mode, c.permits);
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << "mode " << c.mode << " permits " << c.permits;
    EXPECT_EQ(FieldOf(r.status()), c.field) << r.status();
  }
  ASSERT_OK_AND_ASSIGN(v1::DescribeResponse untouched, Describe("bad"));
  EXPECT_FALSE(untouched.held());
}

TEST_F(LockKindsTest, MaxHoldersPerResourceBoundsSharedLeasesAndPermits) {
  StartServer({"--max_holders_per_resource=3"});
  EXPECT_THAT(server_->WaitForLog("max_holders_per_resource=3", absl::Seconds(30)),
              IsOk());
  std::vector<uint64_t> tokens;
  for (int i = 0; i < 3; ++i) {
    tokens.push_back(Granted("doc", absl::StrCat("reader-", i), v1::LEASE_MODE_SHARED));
  }
  ASSERT_OK_AND_ASSIGN(v1::AcquireResponse fourth,
                       Acquire("doc", "reader-3", v1::LEASE_MODE_SHARED));
  EXPECT_FALSE(fourth.acquired());
  EXPECT_EQ(fourth.reason(), v1::AcquireResponse::HELD);

  absl::StatusOr<v1::AcquireResponse> too_many =
      Acquire("pool", "worker", v1::LEASE_MODE_PERMIT, 4);
  EXPECT_THAT(too_many, StatusIs(absl::StatusCode::kInvalidArgument,
                                 AllOf(HasSubstr("permits"), HasSubstr("3"))));
  EXPECT_NE(Granted("pool", "worker", v1::LEASE_MODE_PERMIT, 3), 0u);
}

TEST_F(LockKindsTest, TheSessionStreamCarriesModesAndDescribesThem) {
  StartServer();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = stub_->Session(&ctx);
  const auto acquire = [](uint64_t id, const std::string& holder, int mode) {
    v1::LockCall call = testing::AcquireCall(id, "doc", holder, absl::Seconds(60));
    call.mutable_acquire()->set_mode(static_cast<v1::LeaseMode>(mode));
    return call;
  };
  v1::LockSessionRequest message;
  for (const v1::LockCall& call :
       {acquire(1, "reader-a", v1::LEASE_MODE_SHARED),
        acquire(2, "reader-b", v1::LEASE_MODE_SHARED), acquire(3, "writer", 7)}) {
    *message.add_calls() = call;
  }
  ASSERT_TRUE(stream->Write(message));
  std::map<uint64_t, v1::LockResult> answers;
  v1::LockSessionResponse response;
  while (answers.size() < 3 && stream->Read(&response)) {
    for (const v1::LockResult& r : response.results()) answers[r.request_id()] = r;
  }
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_TRUE(answers[1].acquire().acquired()) << answers[1].ShortDebugString();
  EXPECT_TRUE(answers[2].acquire().acquired()) << answers[2].ShortDebugString();
  EXPECT_NE(answers[1].acquire().token(), answers[2].acquire().token());
  const absl::Status refused = testing::StatusOf(answers[3]);
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode")));
  EXPECT_EQ(FieldOf(refused), "mode");

  message.Clear();
  *message.add_calls() = testing::DescribeCall(4, "doc");
  ASSERT_TRUE(stream->Write(message));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.results_size(), 1);
  const v1::DescribeResponse& described = response.results(0).describe();
  EXPECT_EQ(described.mode(), v1::LEASE_MODE_SHARED);
  EXPECT_EQ(described.holders(), 2u);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace fencegate
