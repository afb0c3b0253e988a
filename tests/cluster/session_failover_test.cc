// The lock service's Session stream on a replicated deployment, with real
// processes on loopback: a standby relays the stream to the leader (calls,
// answers and pushed losses); when the leader dies, or its term ends while
// it lives (paused past its etcd session), the stream ends with UNAVAILABLE,
// and the client reconnects to the new leader, where its leases survived:
// a renewal on the new stream succeeds with the old token and listens again.
// No sleeps: reads block under the stream's deadline, waits poll a
// condition under a deadline.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/grpc_status.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/cluster/cluster_client.h"
#include "tests/cluster/leader_and_standby.h"
#include "tests/cluster/lockservice_cluster.h"
#include "tests/testing/lock_session_calls.h"
#include "harness/poll.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

using ::absl::Seconds;
using ::testing::HasSubstr;
using SessionStream =
    grpc::ClientReaderWriter<v1::LockSessionRequest, v1::LockSessionResponse>;

constexpr absl::Duration kSessionFailoverPatience = Seconds(90);

// A Session stream to one instance. Everything read is kept, so a wait
// for one answer or push does not lose the others that came with it.
class Session {
 public:
  explicit Session(const std::string& address)
      : stub_(v1::LockService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {
    ctx_.set_deadline(absl::ToChronoTime(absl::Now() + kSessionFailoverPatience));
    stream_ = stub_->Session(&ctx_);
  }
  ~Session() {
    if (!finished_) {
      ctx_.TryCancel();
      End().IgnoreError();  // cancelled
    }
  }

  bool Send(const std::vector<v1::LockCall>& calls) {
    v1::LockSessionRequest message;
    for (const v1::LockCall& call : calls) *message.add_calls() = call;
    return stream_->Write(message);
  }
  // The answer to `request_id`; INTERNAL if the stream ended first.
  absl::StatusOr<v1::LockResult> Answer(uint64_t request_id) {
    for (;;) {
      for (const v1::LockResult& r : results_) {
        if (r.request_id() == request_id) return r;
      }
      if (!ReadOne())
        return absl::InternalError(absl::StrCat("no answer to ", request_id));
    }
  }
  // Whether the loss of `token` is pushed, for `reason`, before the stream
  // ends.
  bool PushedLost(uint64_t token, v1::LeaseLost::Reason reason) {
    for (;;) {
      for (const v1::LeaseLost& l : lost_) {
        if (l.token() == token) return l.reason() == reason;
      }
      if (!ReadOne()) return false;
    }
  }
  // Reads to the end of the stream; its status.
  absl::Status End() {
    while (ReadOne()) {
    }
    finished_ = true;
    return FromGrpcStatus(stream_->Finish());
  }

 private:
  bool ReadOne() {
    v1::LockSessionResponse message;
    if (!stream_->Read(&message)) return false;
    results_.insert(results_.end(), message.results().begin(), message.results().end());
    lost_.insert(lost_.end(), message.lost().begin(), message.lost().end());
    return true;
  }

  std::unique_ptr<v1::LockService::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<SessionStream> stream_;
  bool finished_ = false;
  std::vector<v1::LockResult> results_;
  std::vector<v1::LeaseLost> lost_;
};

uint64_t GrantedToken(const absl::StatusOr<v1::LockResult>& answer) {
  if (!answer.ok() || answer->result_case() != v1::LockResult::kAcquire ||
      !answer->acquire().acquired()) {
    ADD_FAILURE() << "not granted: "
                  << (answer.ok() ? answer->ShortDebugString()
                                  : answer.status().ToString());
    return 0;
  }
  return answer->acquire().token();
}

class SessionFailoverTest : public LeaderAndStandbyTest {
 protected:
  // A new stream to instance `i` on which renewing `token` of `resource`
  // succeeds (retried on fresh streams until the instance leads or knows
  // the leader): the client's re-attachment after a failover.
  std::unique_ptr<Session> Reattach(int i, const std::string& resource, uint64_t token,
                                    absl::Duration ttl) {
    std::unique_ptr<Session> session;
    absl::Status last;
    absl::Status renewed = PollUntil(
        [&] {
          session = std::make_unique<Session>(cluster_->instance(i).address());
          if (!session->Send({RenewCall(1, resource, token, ttl)})) return false;
          absl::StatusOr<v1::LockResult> answer = session->Answer(1);
          last = answer.ok() ? StatusOf(*answer) : answer.status();
          return last.ok();
        },
        kSessionFailoverPatience, "a renewal on a new stream after the failover");
    EXPECT_THAT(renewed, IsOk()) << last;
    return session;
  }
};

TEST_F(SessionFailoverTest, AStandbyRelaysTheStreamAndItEndsWhenTheLeaderDies) {
  StartCluster();
  auto session = std::make_unique<Session>(cluster_->instance(standby_).address());
  ASSERT_TRUE(session->Send({AcquireCall(1, "kept", "alice", Seconds(30)),
                             AcquireCall(2, "short", "alice", absl::Milliseconds(500))}));
  const uint64_t kept = GrantedToken(session->Answer(1));
  const uint64_t short_lived = GrantedToken(session->Answer(2));
  // The leader's push comes through the standby.
  EXPECT_TRUE(session->PushedLost(short_lived, v1::LeaseLost::EXPIRED));
  auto seen = Stub(leader_).Describe("kept");
  ASSERT_THAT(seen, IsOk());
  EXPECT_EQ(seen->token(), kept);

  cluster_->Kill(leader_);
  EXPECT_THAT(session->End(), StatusIs(absl::StatusCode::kUnavailable));
  // The survivor leads; the lease survived; renewing it on a new stream
  // makes that stream listen to it.
  std::unique_ptr<Session> again = Reattach(standby_, "kept", kept, Seconds(1));
  EXPECT_TRUE(again->PushedLost(kept, v1::LeaseLost::EXPIRED));
}

TEST_F(SessionFailoverTest,
       AStreamEndsUnavailableWhenItsLeadersTermEndsAndItsLeasesSurvive) {
  StartCluster();
  auto session = std::make_unique<Session>(cluster_->instance(leader_).address());
  ASSERT_TRUE(session->Send({AcquireCall(1, "held", "alice", Seconds(60))}));
  const uint64_t held = GrantedToken(session->Answer(1));

  // The leader pauses past its etcd session: the standby takes over, and
  // the old leader's term ends as soon as it runs again.
  ASSERT_THAT(cluster_->Pause(leader_), IsOk());
  InstanceStub standby = Stub(standby_);
  ASSERT_THAT(PollUntil(
                  [&] {
                    auto probe = standby.Acquire("probe", "p", Seconds(60),
                                                 absl::ZeroDuration(), Seconds(2));
                    return probe.ok() && probe->acquired();
                  },
                  kSessionFailoverPatience, "the standby to take over"),
              IsOk());
  cluster_->Resume(leader_);
  absl::Status end = session->End();
  EXPECT_THAT(
      end, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("term as leader ended")));

  std::unique_ptr<Session> again = Reattach(standby_, "held", held, Seconds(60));
  auto info = standby.Describe("held");
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->holder(), "alice");
  EXPECT_EQ(info->token(), held);
  // A release from elsewhere is pushed to the stream that re-attached.
  ASSERT_THAT(standby.Release("held", held), IsOk());
  EXPECT_TRUE(again->PushedLost(held, v1::LeaseLost::RELEASED));
}

}  // namespace
}  // namespace fencegate::testing
