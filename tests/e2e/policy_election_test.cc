// Authorization of the election calls by policy (docs/security.md): Campaign,
// Proclaim and Resign need `campaign`, Leader and Observe `describe`, and a
// term renews and releases with `campaign` alone (policy_matrix_fixture.h).
#include <string>

#include "tests/e2e/policy_matrix_fixture.h"

namespace fencegate::e2e {
namespace {

// Elections (docs/security.md): campaign for Campaign, Proclaim and Resign;
// the term renews with campaign alone; Leader and Observe need describe.
TEST_F(PolicyMatrixTest, ElectionCallsNeedCampaignAndTheirTermRenewsWithIt) {
  auto alice = Locks("alice");
  auto bob = Locks("bob");
  const auto campaign = [](v1::LockService::Stub& stub, const std::string& election,
                           v1::AcquireResponse* response) {
    v1::CampaignRequest request;
    request.set_election(election);
    request.set_value("10.0.0.1");
    request.set_ttl_ms(60000);
    return Call(
        [&](grpc::ClientContext* c) { return stub.Campaign(c, request, response); });
  };
  v1::AcquireResponse led;
  ASSERT_EQ(campaign(*bob, "jobs/report", &led).code, grpc::StatusCode::OK);
  ASSERT_TRUE(led.acquired());
  v1::AcquireResponse ignored;
  EXPECT_TRUE(Denied(campaign(*bob, "other/report", &ignored)));
  EXPECT_TRUE(Denied(campaign(*alice, "jobs/report", &ignored)));
  Answer no_campaign = campaign(*alice, "locks/report", &ignored);
  EXPECT_TRUE(Denied(no_campaign));  // acquire is not campaign
  EXPECT_THAT(no_campaign.message, HasSubstr("permission 'campaign'"));

  v1::RenewRequest renew;
  renew.set_resource("jobs/report");
  renew.set_token(led.token());
  renew.set_ttl_ms(60000);
  v1::RenewResponse renewed;
  EXPECT_EQ(
      Call([&](grpc::ClientContext* c) { return bob->Renew(c, renew, &renewed); }).code,
      grpc::StatusCode::OK);
  v1::ProclaimRequest proclaim;
  proclaim.set_election("jobs/report");
  proclaim.set_term(led.token());
  proclaim.set_value("10.0.0.2");
  v1::ProclaimResponse said;
  EXPECT_TRUE(Denied(
      Call([&](grpc::ClientContext* c) { return alice->Proclaim(c, proclaim, &said); })));
  EXPECT_EQ(Call([&](grpc::ClientContext* c) {
              return bob->Proclaim(c, proclaim, &said);
            }).code,
            grpc::StatusCode::OK);
  v1::LeaderRequest leader;
  leader.set_election("jobs/report");
  v1::LeaderResponse who;
  EXPECT_TRUE(Denied(
      Call([&](grpc::ClientContext* c) { return alice->Leader(c, leader, &who); })));
  EXPECT_EQ(
      Call([&](grpc::ClientContext* c) { return bob->Leader(c, leader, &who); }).code,
      grpc::StatusCode::OK);
  EXPECT_EQ(who.state().value(), "10.0.0.2");
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ObserveRequest observe;
    observe.set_election("jobs/report");
    auto stream = alice->Observe(&context, observe);
    v1::ObserveResponse message;
    EXPECT_FALSE(stream->Read(&message));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  v1::ResignRequest resign;
  resign.set_election("jobs/report");
  resign.set_term(led.token());
  v1::ResignResponse resigned;
  EXPECT_TRUE(Denied(
      Call([&](grpc::ClientContext* c) { return alice->Resign(c, resign, &resigned); })));
  EXPECT_EQ(Call([&](grpc::ClientContext* c) {
              return bob->Resign(c, resign, &resigned);
            }).code,
            grpc::StatusCode::OK);
}

}  // namespace
}  // namespace fencegate::e2e
