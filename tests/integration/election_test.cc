// Elections over gRPC against the real fencegate-lockservice (and a real
// fencegate-gateway where a write is fenced): Campaign, Proclaim, Leader,
// Resign and Observe as lock.proto and docs/semantics.md ("Elections")
// describe them, with no client library in between.
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/lockservice_process_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A change as (leader, term, seq, value, candidate).
using Change = std::tuple<bool, uint64_t, uint64_t, std::string, std::string>;

Change Of(const v1::ElectionChange& c) {
  return {c.leader(), c.term(), c.seq(), c.value(), c.candidate()};
}

class ElectionTest : public LockServiceProcessTest {
 protected:
  void SetUp() override { StartServer(); }

  absl::StatusOr<v1::AcquireResponse> Campaign(
      const std::string& election, const std::string& candidate, const std::string& value,
      absl::Duration ttl = absl::Seconds(30),
      absl::Duration wait = absl::ZeroDuration()) {
    grpc::ClientContext ctx;
    SetDeadline(ctx, wait + absl::Seconds(30));
    v1::CampaignRequest request;
    request.set_election(election);
    request.set_candidate(candidate);
    request.set_value(value);
    request.set_ttl_ms(absl::ToInt64Milliseconds(ttl));
    request.set_wait_ms(absl::ToInt64Milliseconds(wait));
    v1::AcquireResponse response;
    grpc::Status status = stub_->Campaign(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  absl::StatusOr<uint64_t> Proclaim(const std::string& election, uint64_t term,
                                    const std::string& value) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::ProclaimRequest request;
    request.set_election(election);
    request.set_term(term);
    request.set_value(value);
    v1::ProclaimResponse response;
    grpc::Status status = stub_->Proclaim(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response.seq();
  }

  absl::Status Resign(const std::string& election, uint64_t term) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::ResignRequest request;
    request.set_election(election);
    request.set_term(term);
    v1::ResignResponse response;
    return FromGrpcStatus(stub_->Resign(&ctx, request, &response));
  }

  absl::StatusOr<v1::ElectionChange> Leader(const std::string& election) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::LeaderRequest request;
    request.set_election(election);
    v1::LeaderResponse response;
    grpc::Status status = stub_->Leader(&ctx, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response.state();
  }

  // An Observe stream, read one change at a time.
  class Observer {
   public:
    Observer(v1::LockService::Stub& stub, const std::string& election,
             uint64_t after_term, uint64_t after_seq) {
      SetDeadline(ctx_, absl::Seconds(60));
      v1::ObserveRequest request;
      request.set_election(election);
      request.set_after_term(after_term);
      request.set_after_seq(after_seq);
      reader_ = stub.Observe(&ctx_, request);
    }
    ~Observer() {
      ctx_.TryCancel();
      reader_->Finish().ok();
    }
    // The next change; nullopt once the stream ended.
    std::optional<Change> Next() {
      while (at_ >= message_.changes_size()) {
        if (!reader_->Read(&message_)) return std::nullopt;
        at_ = 0;
      }
      return Of(message_.changes(at_++));
    }

   private:
    grpc::ClientContext ctx_;
    std::unique_ptr<grpc::ClientReader<v1::ObserveResponse>> reader_;
    v1::ObserveResponse message_;
    int at_ = 0;
  };
};

TEST_F(ElectionTest, ADeposedLeaderIsFencedAndObserversSeeTheHandOver) {
  // A gateway beside it: the term is the token of the leader's writes.
  auto gateway = ServerProcess::Start(
      FENCEGATE_GATEWAY_BIN, {"--db=" + dir_.File("gateway.db")}, dir_.path(), "gateway");
  ASSERT_TRUE(gateway.ok()) << gateway.status();
  auto storage = v1::Gateway::NewStub(
      grpc::CreateChannel((*gateway)->address(), grpc::InsecureChannelCredentials()));
  auto write = [&](uint64_t token, const std::string& value) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    v1::WriteRequest request;
    request.set_resource("scheduler");
    request.set_token(token);
    request.mutable_mutation()->set_key("heartbeat");
    request.mutable_mutation()->set_value(value);
    v1::WriteResponse response;
    return FromGrpcStatus(storage->Write(&ctx, request, &response));
  };

  Observer observer(*stub_, "scheduler", 0, 0);
  ASSERT_EQ(observer.Next(), (Change{false, 0, 0, "", ""}));

  ASSERT_OK_AND_ASSIGN(v1::AcquireResponse a,
                       Campaign("scheduler", "a", "10.0.0.1", absl::Seconds(1)));
  ASSERT_TRUE(a.acquired());
  const uint64_t t1 = a.token();
  ASSERT_THAT(write(t1, "a was here"), IsOk());
  ASSERT_OK_AND_ASSIGN(uint64_t seq, Proclaim("scheduler", t1, "10.0.0.1:2"));
  EXPECT_EQ(seq, 1u);

  // b waits in line; a stops renewing (paused, say) and its term runs out.
  absl::StatusOr<v1::AcquireResponse> b;
  std::thread candidate([&] {
    b = Campaign("scheduler", "b", "10.0.0.2", absl::Seconds(30), absl::Seconds(20));
  });
  candidate.join();
  ASSERT_THAT(b, IsOk());
  ASSERT_TRUE(b->acquired());
  const uint64_t t2 = b->token();
  EXPECT_GT(t2, t1);
  ASSERT_THAT(write(t2, "b took over"), IsOk());

  // a wakes and carries on as if it still led: refused everywhere.
  EXPECT_THAT(write(t1, "a again"),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("stale")));
  absl::StatusOr<uint64_t> late = Proclaim("scheduler", t1, "a again");
  EXPECT_THAT(late, StatusIs(absl::StatusCode::kAborted));
  std::optional<ErrorInfo> why = GetErrorInfo(late.status());
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->reason, ErrorReason::kLeaseLost);
  EXPECT_EQ(why->current_token, t2);
  EXPECT_THAT(Resign("scheduler", t1), StatusIs(absl::StatusCode::kAborted));

  ASSERT_OK_AND_ASSIGN(v1::ElectionChange now, Leader("scheduler"));
  EXPECT_EQ(Of(now), (Change{true, t2, 0, "10.0.0.2", "b"}));
  EXPECT_GT(now.remaining_ms(), 0);

  EXPECT_EQ(observer.Next(), (Change{true, t1, 0, "10.0.0.1", "a"}));
  EXPECT_EQ(observer.Next(), (Change{true, t1, 1, "10.0.0.1:2", "a"}));
  EXPECT_EQ(observer.Next(), (Change{false, t1, 2, "", ""}));
  EXPECT_EQ(observer.Next(), (Change{true, t2, 0, "10.0.0.2", "b"}));
}

TEST_F(ElectionTest, AnObserverResumesAfterTheLastChangeItSaw) {
  ASSERT_OK_AND_ASSIGN(v1::AcquireResponse a, Campaign("jobs", "a", "v0"));
  const uint64_t term = a.token();
  ASSERT_THAT(Proclaim("jobs", term, "v1"), IsOk());
  ASSERT_THAT(Proclaim("jobs", term, "v2"), IsOk());

  // It saw (term, 1): the state now, (term, 2), is new to it.
  Observer behind(*stub_, "jobs", term, 1);
  EXPECT_EQ(behind.Next(), (Change{true, term, 2, "v2", "a"}));
  // It saw (term, 2): nothing until the next change.
  Observer current(*stub_, "jobs", term, 2);
  ASSERT_THAT(Resign("jobs", term), IsOk());
  EXPECT_EQ(current.Next(), (Change{false, term, 3, "", ""}));
  EXPECT_EQ(behind.Next(), (Change{false, term, 3, "", ""}));

  // Leader(), and an observer that comes later, tell the end alike (the
  // torture's observers once disagreed: the pushed end named the candidate).
  ASSERT_OK_AND_ASSIGN(v1::ElectionChange now, Leader("jobs"));
  EXPECT_EQ(Of(now), (Change{false, term, 3, "", ""}));
  Observer fresh(*stub_, "jobs", 0, 0);
  EXPECT_EQ(fresh.Next(), (Change{false, term, 3, "", ""}));
}

TEST_F(ElectionTest, BadInputNamesTheFieldAndTheLimit) {
  EXPECT_THAT(Campaign("", "a", "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("election")));
  EXPECT_THAT(Campaign("jobs", "", "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("candidate")));
  EXPECT_THAT(Campaign("jobs", "a", std::string(4097, 'v')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("4096 bytes")));
  EXPECT_THAT(Proclaim("jobs", 0, "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("term")));
  EXPECT_THAT(Resign("jobs", 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("term")));
  EXPECT_THAT(Leader(""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("election")));
  Observer bad(*stub_, "", 0, 0);
  EXPECT_EQ(bad.Next(), std::nullopt);
  ASSERT_OK_AND_ASSIGN(v1::ElectionChange now, Leader("jobs"));
  EXPECT_FALSE(now.leader());
}

}  // namespace
}  // namespace fencegate::testing
