// Authorization by policy (--policy, docs/security.md "Authorization") with
// the real binaries over mutual TLS, certificates made for the test: every
// permission allowed and refused, over unary calls and over both Session
// streams; an Acquire of several resources refused whole; the refusals
// counted by permission; the gateway's WatchFences follower working under
// its own identity; a SIGHUP with a new file changing the answer, and one
// with a bad file keeping the old policy (counted); and the starts refused
// without mutual TLS and for a malformed file.
#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e/policy_matrix_fixture.h"

namespace fencegate::e2e {
namespace {

TEST_F(PolicyMatrixTest, LockServiceUnaryCallsAllowedAndRefusedByPermission) {
  auto alice = Locks("alice");
  auto bob = Locks("bob");
  uint64_t token = 0;
  EXPECT_EQ(Acquire(*alice, "locks/a", &token).code, grpc::StatusCode::OK);
  // acquire: outside alice's prefix, and for bob anywhere.
  Answer refused = Acquire(*alice, "other/a");
  EXPECT_TRUE(Denied(refused));
  EXPECT_THAT(refused.message,
              AllOf(HasSubstr("identity 'CN=alice'"), HasSubstr("permission 'acquire'"),
                    HasSubstr("resource 'other/a'")));
  EXPECT_TRUE(Denied(Acquire(*bob, "locks/b")));
  // Several resources: one outside the prefix refuses the whole call, and
  // the one inside stays free.
  {
    v1::AcquireRequest request;
    request.add_resources("locks/m1");
    request.add_resources("other/m2");
    request.set_ttl_ms(60000);
    v1::AcquireResponse response;
    Answer many = Call(
        [&](grpc::ClientContext* c) { return alice->Acquire(c, request, &response); });
    EXPECT_TRUE(Denied(many));
    EXPECT_THAT(many.message, HasSubstr("'other/m2'"));
    v1::DescribeResponse state;
    EXPECT_EQ(Describe(*alice, "locks/m1", &state).code, grpc::StatusCode::OK);
    EXPECT_FALSE(state.held()) << "nothing of a refused call may change";
  }
  // Renew and Release need acquire too: bob cannot touch alice's lease,
  // alice can.
  v1::RenewRequest renew;
  renew.set_resource("locks/a");
  renew.set_token(token);
  renew.set_ttl_ms(60000);
  v1::RenewResponse renewed;
  EXPECT_TRUE(Denied(
      Call([&](grpc::ClientContext* c) { return bob->Renew(c, renew, &renewed); })));
  EXPECT_EQ(
      Call([&](grpc::ClientContext* c) { return alice->Renew(c, renew, &renewed); }).code,
      grpc::StatusCode::OK);
  v1::ReleaseRequest release;
  release.set_resource("locks/a");
  release.set_token(token);
  v1::ReleaseResponse released;
  EXPECT_TRUE(Denied(
      Call([&](grpc::ClientContext* c) { return bob->Release(c, release, &released); })));
  EXPECT_EQ(Call([&](grpc::ClientContext* c) {
              return alice->Release(c, release, &released);
            }).code,
            grpc::StatusCode::OK);
  // describe: per resource; WatchFences needs it on every resource.
  EXPECT_TRUE(Denied(Describe(*alice, "other/a")));
  EXPECT_TRUE(Denied(Describe(*bob, "locks/a")));
  EXPECT_TRUE(Denied(WatchFences(*alice)));
  auto ops = Locks("ops");
  EXPECT_EQ(WatchFences(*ops).code, grpc::StatusCode::OK);
  // admin: ServerInfo.
  EXPECT_TRUE(Denied(ServerInfo("alice", *lockservice_)));
  EXPECT_EQ(ServerInfo("ops", *lockservice_).code, grpc::StatusCode::OK);

  const std::string metrics = Metrics(*lockservice_);
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"acquire\"} 5"));
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"describe\"} 3"));
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"admin\"} 1"));
  EXPECT_THAT(lockservice_->LogSinceStart(),
              HasSubstr("authz: refused identity=\"CN=bob\" permission=acquire "
                        "resource=\"locks/b\""));
}

TEST_F(PolicyMatrixTest, LockSessionCallsAreJudgedOneByOne) {
  auto alice = Locks("alice");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = alice->Session(&context);
  v1::LockSessionRequest message;
  auto add = [&](uint64_t id) {
    v1::LockCall* call = message.add_calls();
    call->set_request_id(id);
    return call;
  };
  add(1)->mutable_acquire()->set_resource("locks/s");
  message.mutable_calls(0)->mutable_acquire()->set_ttl_ms(60000);
  add(2)->mutable_acquire()->set_resource("other/s");
  message.mutable_calls(1)->mutable_acquire()->set_ttl_ms(60000);
  add(3)->mutable_describe()->set_resource("other/s");
  add(4)->mutable_describe()->set_resource("locks/s");
  v1::AcquireRequest* many = add(5)->mutable_acquire();
  many->add_resources("locks/s2");
  many->add_resources("other/s2");
  many->set_ttl_ms(60000);
  v1::RenewRequest* renew = add(6)->mutable_renew();
  renew->set_resource("other/s");
  renew->set_token(1);
  renew->set_ttl_ms(60000);
  v1::ReleaseRequest* release = add(7)->mutable_release();
  release->set_resource("other/s");
  release->set_token(1);
  ASSERT_TRUE(stream->Write(message));
  std::map<uint64_t, v1::LockResult> results;
  v1::LockSessionResponse response;
  while (results.size() < 7 && stream->Read(&response)) {
    for (const v1::LockResult& result : response.results()) {
      results[result.request_id()] = result;
    }
  }
  ASSERT_EQ(results.size(), 7u);
  EXPECT_TRUE(results[1].has_acquire()) << results[1].DebugString();
  EXPECT_TRUE(results[1].acquire().acquired());
  for (uint64_t denied : {2, 3, 5, 6, 7}) {
    ASSERT_TRUE(results[denied].has_error()) << denied;
    EXPECT_EQ(results[denied].error().code(), grpc::StatusCode::PERMISSION_DENIED)
        << results[denied].DebugString();
    EXPECT_THAT(results[denied].error().message(), HasSubstr("identity 'CN=alice'"));
  }
  EXPECT_THAT(results[3].error().message(), HasSubstr("permission 'describe'"));
  EXPECT_TRUE(results[4].has_describe()) << results[4].DebugString();
  stream->WritesDone();
  context.TryCancel();
  v1::DescribeResponse state;
  EXPECT_EQ(Describe(*alice, "locks/s2", &state).code, grpc::StatusCode::OK);
  EXPECT_FALSE(state.held());
}

TEST_F(PolicyMatrixTest, GatewayUnaryAndSessionCallsAllowedAndRefusedByPermission) {
  auto alice = Gateway("alice");
  auto bob = Gateway("bob");
  // The follower is allowed (describe on *): a grant reaches the gateway's
  // fence without any write.
  uint64_t token = 0;
  ASSERT_EQ(Acquire(*Locks("alice"), "locks/g", &token).code, grpc::StatusCode::OK);
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    v1::DescribeResourceRequest request;
                    request.set_resource("locks/g");
                    v1::DescribeResourceResponse response;
                    Call([&](grpc::ClientContext* c) {
                      return alice->Describe(c, request, &response);
                    });
                    return response.max_token() == token;
                  },
                  absl::Seconds(30), "the gateway's fence to follow the grant"),
              IsOk());

  for (const std::string resource : {"locks/g", "other/g"}) {
    const bool inside = resource == "locks/g";
    SCOPED_TRACE(resource);
    auto judged = [&](const Answer& a) { return inside ? Allowed(a) : Denied(a); };
    v1::WriteRequest write;
    write.set_resource(resource);
    write.set_token(token);
    write.mutable_mutation()->set_key("k");
    write.mutable_mutation()->set_value("v");
    v1::WriteResponse written;
    EXPECT_TRUE(judged(
        Call([&](grpc::ClientContext* c) { return alice->Write(c, write, &written); })));
    EXPECT_TRUE(Denied(
        Call([&](grpc::ClientContext* c) { return bob->Write(c, write, &written); })));
    v1::MultiWriteRequest multi;
    multi.set_resource(resource);
    multi.set_token(token);
    multi.add_mutations()->set_key("k2");
    multi.mutable_mutations(0)->set_value("v");
    v1::MultiWriteResponse multi_written;
    EXPECT_TRUE(judged(Call([&](grpc::ClientContext* c) {
      return alice->MultiWrite(c, multi, &multi_written);
    })));
    v1::ReadRequest read;
    read.set_resource(resource);
    read.set_key("k");
    v1::ReadResponse got;
    EXPECT_TRUE(
        judged(Call([&](grpc::ClientContext* c) { return alice->Read(c, read, &got); })));
    v1::ListRequest list;
    list.set_resource(resource);
    v1::ListResponse listed;
    EXPECT_TRUE(judged(
        Call([&](grpc::ClientContext* c) { return alice->List(c, list, &listed); })));
    v1::FenceRequest fence;
    fence.set_resource(resource);
    fence.set_token(token);
    v1::FenceResponse fenced;
    Answer fence_answer =
        Call([&](grpc::ClientContext* c) { return alice->Fence(c, fence, &fenced); });
    EXPECT_TRUE(judged(fence_answer));
    if (!inside) {
      EXPECT_THAT(fence_answer.message, HasSubstr("permission 'fence'"));
    }
    v1::DescribeResourceRequest describe;
    describe.set_resource(resource);
    v1::DescribeResourceResponse described;
    EXPECT_TRUE(judged(Call([&](grpc::ClientContext* c) {
      return alice->Describe(c, describe, &described);
    })));
    if (!inside) {
      EXPECT_EQ(described.max_token(), 0u);
    }
  }

  // The Session stream: each call judged alone.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = alice->Session(&context);
  v1::GatewaySessionRequest message;
  auto add = [&](uint64_t id) {
    v1::GatewayCall* call = message.add_calls();
    call->set_request_id(id);
    return call;
  };
  v1::WriteRequest* ok_write = add(1)->mutable_write();
  ok_write->set_resource("locks/g");
  ok_write->set_token(token);
  ok_write->mutable_mutation()->set_key("s");
  ok_write->mutable_mutation()->set_value("v");
  v1::WriteRequest* bad_write = add(2)->mutable_write();
  *bad_write = *ok_write;
  bad_write->set_resource("other/g");
  v1::ReadRequest* bad_read = add(3)->mutable_read();
  bad_read->set_resource("other/g");
  bad_read->set_key("s");
  v1::FenceRequest* bad_fence = add(4)->mutable_fence();
  bad_fence->set_resource("other/g");
  bad_fence->set_token(token);
  v1::MultiWriteRequest* bad_multi = add(5)->mutable_multi_write();
  bad_multi->set_resource("other/g");
  bad_multi->set_token(token);
  bad_multi->add_mutations()->set_key("s");
  ASSERT_TRUE(stream->Write(message));
  std::map<uint64_t, v1::GatewayResult> results;
  v1::GatewaySessionResponse response;
  while (results.size() < 5 && stream->Read(&response)) {
    for (const v1::GatewayResult& result : response.results()) {
      results[result.request_id()] = result;
    }
  }
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(results[1].has_write()) << results[1].DebugString();
  for (uint64_t denied : {2, 3, 4, 5}) {
    ASSERT_TRUE(results[denied].has_error()) << denied;
    EXPECT_EQ(results[denied].error().code(), grpc::StatusCode::PERMISSION_DENIED)
        << results[denied].DebugString();
  }
  EXPECT_THAT(results[3].error().message(), HasSubstr("permission 'read'"));
  stream->WritesDone();
  context.TryCancel();

  EXPECT_TRUE(Denied(ServerInfo("alice", *gateway_)));
  EXPECT_EQ(ServerInfo("ops", *gateway_).code, grpc::StatusCode::OK);
  const std::string metrics = Metrics(*gateway_);
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"write\"} 6"));
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"read\"} 3"));
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"fence\"} 2"));
  EXPECT_THAT(metrics,
              HasSubstr("fencegate_authz_refusals_total{permission=\"describe\"} 1"));
}

TEST_F(PolicyMatrixTest, SighupReloadsAGoodPolicyAndKeepsTheOldOnABadOne) {
  auto alice = Locks("alice");
  EXPECT_TRUE(Denied(Acquire(*alice, "other/r1")));
  WritePolicy(absl::StrCat(kPolicy, "allow CN=alice acquire other/\n"));
  lockservice_->process().Signal(SIGHUP);
  AwaitLogged(*lockservice_, "SIGHUP: policy reloaded", 1);
  EXPECT_THAT(lockservice_->LogSinceStart(), HasSubstr("(4 rules)"));
  EXPECT_EQ(Acquire(*alice, "other/r1").code, grpc::StatusCode::OK);

  WritePolicy("allow CN=alice acquire\n");  // a word short
  lockservice_->process().Signal(SIGHUP);
  AwaitLogged(*lockservice_, "SIGHUP: policy not reloaded", 1);
  EXPECT_THAT(lockservice_->LogSinceStart(),
              HasSubstr(policy_path_ + ":1: 'allow' takes 3 words"));
  EXPECT_EQ(Acquire(*alice, "other/r2").code, grpc::StatusCode::OK)
      << "the old one stays";
  EXPECT_THAT(Metrics(*lockservice_),
              HasSubstr("fencegate_authz_policy_reload_failures_total 1"));
}

// The status pages (HTTP, no identity the policy could judge) list no
// resource names under a policy: the lock service's table of resources and
// the gateway's stale refusals are withheld.
TEST_F(PolicyMatrixTest, StatusPagesListNoResourceNames) {
  uint64_t token = 0;
  ASSERT_EQ(Acquire(*Locks("alice"), "locks/secret", &token).code, grpc::StatusCode::OK);
  auto gateway = Gateway("alice");
  v1::WriteRequest write;
  write.set_resource("locks/secret");
  write.set_token(token);  // stale once fenced above: refused, and on the page
  write.mutable_mutation()->set_key("k");
  write.mutable_mutation()->set_value("v");
  v1::FenceRequest fence;
  fence.set_resource("locks/secret");
  fence.set_token(token + 5);  // no signing here: any token may fence
  v1::FenceResponse fenced;
  ASSERT_EQ(Call([&](grpc::ClientContext* c) {
              return gateway->Fence(c, fence, &fenced);
            }).code,
            grpc::StatusCode::OK);
  v1::WriteResponse written;
  ASSERT_EQ(Call([&](grpc::ClientContext* c) {
              return gateway->Write(c, write, &written);
            }).code,
            grpc::StatusCode::ABORTED);
  const ClientTlsFiles& ops = certs_.clients["ops"];
  for (const testing::ServerProcess* server : {lockservice_.get(), gateway_.get()}) {
    SCOPED_TRACE(server->name());
    ASSERT_OK_AND_ASSIGN(int port, server->MetricsPort());
    ASSERT_OK_AND_ASSIGN(testing::HttpAnswer page,
                         testing::HttpGet(absl::StrCat("https://127.0.0.1:", port), "/",
                                          testing::HttpTls{ops.ca, ops.cert, ops.key}));
    EXPECT_EQ(page.status, 200);
    EXPECT_THAT(page.body, HasSubstr("Resources are not listed"));
    EXPECT_THAT(page.body, ::testing::Not(HasSubstr("locks/secret")));
  }
}

// Starts that must be refused: the server exits with an error naming why.
class PolicyStartTest : public ::testing::Test {
 protected:
  absl::StatusOr<testing::ProgramResult> Run(const std::string& binary,
                                             std::vector<std::string> args) {
    args.insert(args.begin(), {binary, "--listen=127.0.0.1:0",
                               "--metrics_listen=", "--db=" + dir_.File("state.db")});
    return testing::RunProgram(args, absl::Seconds(30));
  }
  testing::TempDir dir_;
};

TEST_F(PolicyStartTest, APolicyWithoutMutualTlsOrAMalformedOneIsRefusedAtStart) {
  auto certs = demo::MakeTestCertificates(dir_.path(), {});
  ASSERT_THAT(certs, IsOk());
  const std::string policy = dir_.File("p.policy");
  std::ofstream(policy) << "allow CN=a acquire *\n";
  const std::string bad = dir_.File("bad.policy");
  std::ofstream(bad) << "# fine\nallow CN=a acquire,lock *\n";
  for (const std::string binary : {FENCEGATE_LOCKSERVICE_BIN, FENCEGATE_GATEWAY_BIN}) {
    SCOPED_TRACE(binary);
    ASSERT_OK_AND_ASSIGN(testing::ProgramResult plain,
                         Run(binary, {"--policy=" + policy}));
    EXPECT_NE(plain.exit_code, 0);
    EXPECT_THAT(plain.stderr_text, HasSubstr("needs mutual TLS"));
    // TLS without client certificates cannot judge anyone either.
    ASSERT_OK_AND_ASSIGN(
        testing::ProgramResult tls_only,
        Run(binary, {"--policy=" + policy, "--tls_cert=" + certs->server.cert,
                     "--tls_key=" + certs->server.key}));
    EXPECT_NE(tls_only.exit_code, 0);
    EXPECT_THAT(tls_only.stderr_text, HasSubstr("needs mutual TLS"));
    ASSERT_OK_AND_ASSIGN(
        testing::ProgramResult malformed,
        Run(binary, {"--policy=" + bad, "--tls_cert=" + certs->server.cert,
                     "--tls_key=" + certs->server.key,
                     "--tls_client_ca=" + certs->server.client_ca}));
    EXPECT_NE(malformed.exit_code, 0);
    EXPECT_THAT(malformed.stderr_text, HasSubstr(bad + ":2: unknown permission 'lock'"));
  }
}

}  // namespace
}  // namespace fencegate::e2e
