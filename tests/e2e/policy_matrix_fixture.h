// The fixture of the policy e2e tests (policy_matrix_test.cc,
// policy_election_test.cc): both real servers (two_servers_fixture.h) over
// mutual TLS with certificates made for the test, run with the policy
// kPolicy, and the
// stubs and helpers that make calls as one identity or another.
//
// Thread safety: a gtest fixture; the test's thread owns it.
#ifndef FENCEGATE_TESTS_E2E_POLICY_MATRIX_FIXTURE_H_
#define FENCEGATE_TESTS_E2E_POLICY_MATRIX_FIXTURE_H_

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/grpc/channel_credentials.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "fencegate/v1/server_info.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "harness/test_certificates.h"
#include "tests/e2e/two_servers_fixture.h"
#include "tests/testing/http_get.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::testing::AllOf;
using ::testing::HasSubstr;

inline constexpr char kPolicy[] =
    "# alice works under locks/; ops administers; the gateway follows grants\n"
    "allow CN=alice acquire,describe,read,write,fence locks/\n"
    "allow CN=ops admin,describe *\n"
    "allow CN=gateway describe *\n"
    "# bob campaigns for the jobs/ elections, and may read them\n"
    "allow CN=bob campaign,describe jobs/\n";

// What a call answered: its code and message.
struct Answer {
  grpc::StatusCode code;
  std::string message;
};

inline bool Denied(const Answer& a) { return a.code == grpc::StatusCode::PERMISSION_DENIED; }
inline bool Allowed(const Answer& a) { return a.code != grpc::StatusCode::PERMISSION_DENIED; }

template <typename Fn>
Answer Call(Fn fn) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = fn(&context);
  return Answer{status.error_code(), status.error_message()};
}

class PolicyMatrixTest : public TwoServersTest {
 protected:
  void SetUp() override {
    auto certs =
        demo::MakeTestCertificates(dir_.path(), {"alice", "bob", "ops", "gateway"});
    ASSERT_THAT(certs, IsOk());
    certs_ = *std::move(certs);
    WritePolicy(kPolicy);
    ASSERT_NO_FATAL_FAILURE(StartLockServiceProcess(ServerArgs("locks.db")));
    std::vector<std::string> gateway_args = ServerArgs("gateway.db");
    const ClientTlsFiles& own = certs_.clients["gateway"];
    gateway_args.insert(
        gateway_args.end(),
        {"--lockservice=" + lockservice_->address(), "--lockservice_tls_ca=" + own.ca,
         "--lockservice_tls_cert=" + own.cert, "--lockservice_tls_key=" + own.key});
    ASSERT_NO_FATAL_FAILURE(StartGatewayProcess(gateway_args));
  }

  std::vector<std::string> ServerArgs(const std::string& db) {
    return {"--db=" + dir_.File(db), "--tls_cert=" + certs_.server.cert,
            "--tls_key=" + certs_.server.key,
            "--tls_client_ca=" + certs_.server.client_ca, "--policy=" + policy_path_};
  }

  void WritePolicy(const std::string& text) {
    std::ofstream(policy_path_, std::ios::trunc) << text;
  }

  std::shared_ptr<grpc::Channel> ChannelAs(const std::string& who,
                                           const testing::ServerProcess& server) {
    auto credentials = MakeChannelCredentials(certs_.clients[who]);
    EXPECT_THAT(credentials, IsOk());
    return grpc::CreateChannel(server.address(), *credentials);
  }
  std::unique_ptr<v1::LockService::Stub> Locks(const std::string& who) {
    return v1::LockService::NewStub(ChannelAs(who, *lockservice_));
  }
  std::unique_ptr<v1::Gateway::Stub> Gateway(const std::string& who) {
    return v1::Gateway::NewStub(ChannelAs(who, *gateway_));
  }
  std::unique_ptr<v1::ServerInfo::Stub> Info(const std::string& who,
                                             const testing::ServerProcess& server) {
    return v1::ServerInfo::NewStub(ChannelAs(who, server));
  }

  Answer Acquire(v1::LockService::Stub& stub, const std::string& resource,
                 uint64_t* token = nullptr) {
    v1::AcquireRequest request;
    request.set_resource(resource);
    request.set_ttl_ms(60000);
    v1::AcquireResponse response;
    Answer answer =
        Call([&](grpc::ClientContext* c) { return stub.Acquire(c, request, &response); });
    if (token != nullptr) *token = response.token();
    return answer;
  }
  Answer Describe(v1::LockService::Stub& stub, const std::string& resource,
                  v1::DescribeResponse* response = nullptr) {
    v1::DescribeRequest request;
    request.set_resource(resource);
    v1::DescribeResponse ignored;
    return Call([&](grpc::ClientContext* c) {
      return stub.Describe(c, request, response != nullptr ? response : &ignored);
    });
  }
  // The first message of a WatchFences stream, or the stream's status.
  Answer WatchFences(v1::LockService::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::WatchFencesRequest request;
    auto reader = stub.WatchFences(&context, request);
    v1::WatchFencesResponse first;
    if (reader->Read(&first)) {
      context.TryCancel();
      return Answer{grpc::StatusCode::OK, ""};
    }
    grpc::Status status = reader->Finish();
    return Answer{status.error_code(), status.error_message()};
  }
  Answer ServerInfo(const std::string& who, const testing::ServerProcess& server) {
    auto stub = Info(who, server);
    v1::GetServerInfoRequest request;
    v1::GetServerInfoResponse response;
    return Call([&](grpc::ClientContext* c) {
      return stub->GetServerInfo(c, request, &response);
    });
  }
  std::string Metrics(const testing::ServerProcess& server) {
    auto stub = Info("ops", server);
    v1::GetMetricsRequest request;
    v1::GetMetricsResponse response;
    Answer answer = Call(
        [&](grpc::ClientContext* c) { return stub->GetMetrics(c, request, &response); });
    EXPECT_EQ(answer.code, grpc::StatusCode::OK) << answer.message;
    return response.exposition();
  }
  // Waits until the server logged `text` `count` times since its start.
  void AwaitLogged(const testing::ServerProcess& server, const std::string& text,
                   int count) {
    ASSERT_THAT(testing::PollUntil(
                    [&] {
                      const std::string log = server.LogSinceStart();
                      int seen = 0;
                      for (size_t at = log.find(text); at != std::string::npos;
                           at = log.find(text, at + 1)) {
                        ++seen;
                      }
                      return seen >= count;
                    },
                    absl::Seconds(30), text),
                IsOk());
  }

  const std::string policy_path_ = dir_.File("fencegate.policy");
  demo::TestCertificates certs_;
};

}  // namespace fencegate::e2e

#endif  // FENCEGATE_TESTS_E2E_POLICY_MATRIX_FIXTURE_H_
