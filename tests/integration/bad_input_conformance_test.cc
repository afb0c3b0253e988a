// Bad input against the real servers (issue 6, item 5): the real
// fencegate-lockservice and fencegate-gateway binaries receive every
// hand-written bad request of bad_requests.h, over 500 of them covering
// every RPC of both services, and each must get the code docs/errors.md
// documents (with its ErrorDetail: reason, field, current token). Then both
// servers must still answer health checks and ordinary requests, and what
// they held before, read back the same way, must not have changed: no lease,
// hold count, waiter, key, value, version or fence, and no token drawn.
//
// Run twice: plain, and with signed tokens (--signing_keys on both servers),
// where the signature cases apply too. Every request carries a valid
// signature unless the case is about the signature; servers without keys
// ignore signatures.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/grpc_status.h"
#include "common/signing_keys.h"
#include "common/token_signer.h"
#include "gmock/gmock.h"
#include "grpc/grpc.h"
#include "gtest/gtest.h"
#include "tests/integration/bad_requests.h"
#include "tests/integration/server_snapshot.h"
#include "tests/testing/health_check.h"
#include "tests/testing/own_channel.h"
#include "tests/testing/raw_call.h"
#include "tests/testing/server_process.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fencegate::conformance {
namespace {

using ::fencegate::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::Not;

// What differs between the answer to `c` and the documented one; "" if
// nothing does.
std::string Deviation(const BadRequest& c, const testing::RawReply& reply) {
  const grpc::Status& s = reply.status;
  if (s.error_code() != c.code) {
    return absl::StrCat("answered code ", s.error_code(), " (", s.error_message(),
                        "); docs/errors.md says ", c.code);
  }
  if (s.ok()) return c.check_response ? c.check_response(reply.response) : "";
  if (!absl::StrContains(s.error_message(), c.message_has)) {
    return absl::StrCat("the message does not say '", c.message_has, "': ", s.error_message());
  }
  if (c.reason == ErrorReason::kUnspecified) return "";
  const absl::Status status = FromGrpcStatus(s);
  const ErrorInfo info = GetErrorInfo(status).value_or(ErrorInfo());
  if (info.reason != c.reason) {
    return absl::StrCat("ErrorDetail reason ", static_cast<int>(info.reason), ", expected ",
                        static_cast<int>(c.reason), " (", s.error_message(), ")");
  }
  if (info.field != c.field) {
    return absl::StrCat("names field '", info.field, "', expected '", c.field, "'");
  }
  // The message must say which field too: by name, or by number when the
  // server does not know it ("Mutation.42").
  const std::string number = c.field.substr(c.field.rfind('.') + 1);
  if (c.reason == ErrorReason::kInvalidField && !absl::StrContains(s.error_message(), c.field) &&
      !absl::StrContains(s.error_message(), "unknown field number " + number)) {
    return absl::StrCat("the message does not name ", c.field, ": ", s.error_message());
  }
  if (c.current_token && info.current_token != *c.current_token) {
    return absl::StrCat("current token ", info.current_token, ", expected ",
                        *c.current_token);
  }
  return "";
}

class BadInputConformanceTest : public ::testing::TestWithParam<bool> {
 protected:
  bool signing() const { return GetParam(); }

  void SetUp() override {
    absl::StatusOr<std::string> key = NewKeyLine("k1", /*sign=*/true);
    ASSERT_THAT(key, IsOk());
    const std::string keys = dir_.File("keys.txt");
    std::ofstream(keys) << *key << "\n";
    absl::StatusOr<KeyRing> ring = KeyRing::Load(keys);
    ASSERT_THAT(ring, IsOk());
    signer_ = std::make_unique<TokenSigner>(*std::move(ring));
    std::vector<std::string> extra;
    if (signing()) extra.push_back("--signing_keys=" + keys);
    lockservice_ = Start(FENCEGATE_LOCKSERVICE_BIN, "lockservice", "locks.db", extra);
    gateway_ = Start(FENCEGATE_GATEWAY_BIN, "gateway", "gateway.db", extra);
    ASSERT_TRUE(lockservice_ && gateway_);
    auto lock_channel = testing::OwnChannel(lockservice_->address());
    auto gateway_channel = testing::OwnChannel(gateway_->address());
    ASSERT_THAT(lock_channel, IsOk());
    ASSERT_THAT(gateway_channel, IsOk());
    snapshot_ = std::make_unique<ServerSnapshot>(*lock_channel, *gateway_channel, signer_.get());
  }

  void TearDown() override {
    if (!HasFailure()) return;
    if (lockservice_) std::cerr << "--- lock service:\n" << lockservice_->LogTail() << "\n";
    if (gateway_) std::cerr << "--- gateway:\n" << gateway_->LogTail() << "\n";
  }

  std::unique_ptr<testing::ServerProcess> Start(const std::string& binary,
                                                const std::string& name,
                                                const std::string& db,
                                                std::vector<std::string> args) {
    args.push_back("--db=" + dir_.File(db));
    auto server = testing::ServerProcess::Start(binary, args, dir_.path(), name);
    EXPECT_THAT(server, IsOk());
    return server.ok() ? *std::move(server) : nullptr;
  }

  // Sends every case that applies; returns one line per deviation.
  std::vector<std::string> SendAll(const std::vector<BadRequest>& cases,
                                   const std::shared_ptr<grpc::Channel>& channel,
                                   const std::string& service, int* sent) {
    std::vector<std::string> deviations;
    for (const BadRequest& c : cases) {
      if (c.signed_only && !signing()) continue;
      ++*sent;
      const std::string deviation =
          Deviation(c, testing::RawUnaryCall(channel, c.method, c.bytes));
      if (!deviation.empty()) deviations.push_back(absl::StrCat(service, " ", c.name, ": ", deviation));
    }
    return deviations;
  }

  testing::TempDir dir_;
  std::unique_ptr<TokenSigner> signer_;
  std::unique_ptr<testing::ServerProcess> lockservice_;
  std::unique_ptr<testing::ServerProcess> gateway_;
  std::unique_ptr<ServerSnapshot> snapshot_;
};

TEST_P(BadInputConformanceTest, EveryBadRequestGetsItsDocumentedCodeAndChangesNothing) {
  ASSERT_OK_AND_ASSIGN(KnownState known, snapshot_->Prepare());
  ASSERT_OK_AND_ASSIGN(std::string before, snapshot_->Take());

  const std::vector<BadRequest> lock_cases = LockServiceBadRequests(known);
  const std::vector<BadRequest> gateway_cases = GatewayBadRequests(known);
  int lock_sent = 0, gateway_sent = 0;
  std::vector<std::string> deviations =
      SendAll(lock_cases, snapshot_->lock_channel(), "lock service", &lock_sent);
  for (std::string& d :
       SendAll(gateway_cases, snapshot_->gateway_channel(), "gateway", &gateway_sent)) {
    deviations.push_back(std::move(d));
  }
  std::cout << "sent " << lock_sent << " bad requests to the lock service and "
            << gateway_sent << " to the gateway" << (signing() ? " (signed tokens)" : "")
            << "\n";
  EXPECT_GE(lock_sent + gateway_sent, 300);
  EXPECT_THAT(deviations, ::testing::IsEmpty()) << absl::StrJoin(deviations, "\n");

  // Both still serve, and nothing they held changed.
  ASSERT_OK_AND_ASSIGN(testing::Serving locks, testing::HealthStatus(snapshot_->lock_channel()));
  ASSERT_OK_AND_ASSIGN(testing::Serving gateway,
                       testing::HealthStatus(snapshot_->gateway_channel()));
  EXPECT_EQ(locks, testing::Serving::kServing);
  EXPECT_EQ(gateway, testing::Serving::kServing);
  ASSERT_OK_AND_ASSIGN(std::string after, snapshot_->Take());
  EXPECT_EQ(after, before);
  EXPECT_THAT(snapshot_->StillServes(known), IsOk());
  // Bad input is answered, not logged by protobuf: a client must not be
  // able to flood the log (a proto3 `string` field logs an ERROR line for
  // every request whose value is not UTF-8).
  const size_t kWholeLog = std::string::npos;
  EXPECT_THAT(lockservice_->LogTail(kWholeLog), Not(HasSubstr("libprotobuf ERROR")));
  EXPECT_THAT(gateway_->LogTail(kWholeLog), Not(HasSubstr("libprotobuf ERROR")));
}

// gRPC shuts its library down when its last object goes, and 1.51 then
// waits up to 10 s for I/O objects still being torn down (after the
// oversized calls, often). Holding the library for the whole process keeps
// that out of the test's time; the servers are separate processes.
struct HoldGrpcLibrary : ::testing::Environment {
  void SetUp() override { grpc_init(); }
};
const ::testing::Environment* const kHoldGrpcLibrary =
    ::testing::AddGlobalTestEnvironment(new HoldGrpcLibrary);

INSTANTIATE_TEST_SUITE_P(Tokens, BadInputConformanceTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Signed" : "Plain");
                         });

}  // namespace
}  // namespace fencegate::conformance
