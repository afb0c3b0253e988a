// The real fencegate-gateway over gRPC: error details on the wire, input
// limits, unknown fields, health, and a clean SIGTERM shutdown.
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
#include "tests/testing/health_check.h"
#include "tests/testing/raw_call.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using GatewayApiTest = GatewayProcessTest;

TEST_F(GatewayApiTest, StaleWriteIsAbortedWithTheCurrentTokenInItsDetail) {
  StartServer();
  ASSERT_THAT(Put(*stub_, "r", 34, "k", "from 34"), IsOk());

  absl::StatusOr<v1::WriteResponse> stale = Put(*stub_, "r", 33, "k", "from 33");

  EXPECT_THAT(stale, StatusIs(absl::StatusCode::kAborted,
                              HasSubstr("acquire the lock again")));
  EXPECT_EQ(InfoOf(stale.status()).reason, ErrorReason::kStaleToken);
  EXPECT_EQ(InfoOf(stale.status()).current_token, 34u);
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "r", "k"));
  EXPECT_EQ(read.value(), "from 34");
}

TEST_F(GatewayApiTest, VersionMismatchCarriesTheCurrentVersionAndToken) {
  StartServer();
  ASSERT_OK_AND_ASSIGN(auto first, Put(*stub_, "r", 5, "k", "v"));

  auto cas = Put(*stub_, "r", 6, "k", "w", first.version() + 1);

  EXPECT_THAT(cas, StatusIs(absl::StatusCode::kAborted));
  ErrorInfo info = InfoOf(cas.status());
  EXPECT_EQ(info.reason, ErrorReason::kVersionMismatch);
  EXPECT_EQ(info.current_version, first.version());
  EXPECT_EQ(info.current_token, 5u);
}

TEST_F(GatewayApiTest, BadInputIsInvalidArgumentNamingTheField) {
  StartServer();
  v1::WriteRequest no_mutation;
  no_mutation.set_resource("r");
  no_mutation.set_token(1);
  auto missing = Write(*stub_, no_mutation);
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(InfoOf(missing.status()).field, "mutation");

  v1::WriteRequest delete_false = no_mutation;
  delete_false.mutable_mutation()->set_key("k");
  delete_false.mutable_mutation()->set_delete_(false);
  EXPECT_EQ(InfoOf(Write(*stub_, delete_false).status()).field, "mutation");

  EXPECT_EQ(InfoOf(Put(*stub_, "", 1, "k", "v").status()).field, "resource");
  EXPECT_EQ(InfoOf(Put(*stub_, "r", 0, "k", "v").status()).field, "token");
  EXPECT_EQ(InfoOf(Put(*stub_, "r", 1, "", "v").status()).field, "mutation.key");
  auto duplicate = MultiPut(*stub_, "r", 1, {{"a", "1"}, {"a", "2"}});
  EXPECT_EQ(InfoOf(duplicate.status()).field, "mutations[1].key");
  ASSERT_OK_AND_ASSIGN(auto described, Describe(*stub_, "r"));
  EXPECT_EQ(described.max_token(), 0u);
}

TEST_F(GatewayApiTest, UnknownFieldsAreRejected) {
  StartServer();
  v1::WriteRequest top;
  top.set_resource("r");
  top.set_token(1);
  top.mutable_mutation()->set_key("k");
  top.mutable_mutation()->set_value("v");
  v1::WriteRequest nested = top;
  top.GetReflection()->MutableUnknownFields(&top)->AddVarint(99, 1);
  v1::Mutation* m = nested.mutable_mutation();
  m->GetReflection()->MutableUnknownFields(m)->AddVarint(42, 7);

  auto top_result = Write(*stub_, top);
  auto nested_result = Write(*stub_, nested);

  EXPECT_THAT(top_result, StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("unknown field number 99")));
  EXPECT_THAT(nested_result, StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("unknown field number 42")));
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "r", "k"));
  EXPECT_FALSE(read.found());
}

// The receive limit leaves room for one oversized value, so the caller gets
// our message naming the field and the limit, not a transport error.
TEST_F(GatewayApiTest, OversizedValueGetsInvalidArgumentNotATransportError) {
  StartServer({"--max_value_bytes=1024", "--max_request_bytes=2048"});
  EXPECT_THAT(Put(*stub_, "r", 1, "k", std::string(1024, 'v')), IsOk());

  auto too_big = Put(*stub_, "r", 1, "k", std::string(1025, 'v'));
  EXPECT_THAT(too_big, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("the limit is 1024 bytes")));
  EXPECT_EQ(InfoOf(too_big.status()).field, "mutation.value");

  auto too_much = MultiPut(*stub_, "r", 1,
                           {{"a", std::string(1024, 'v')}, {"b", std::string(1024, 'v')}});
  EXPECT_THAT(too_much, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("--max_request_bytes")));
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "r", "k"));
  EXPECT_EQ(read.value().size(), 1024u);
}

TEST_F(GatewayApiTest, MultiWriteFencedReadListAndDescribeOverTheWire) {
  StartServer();
  ASSERT_OK_AND_ASSIGN(auto multi,
                       MultiPut(*stub_, "r", 3, {{"a", "1"}, {"b", "22"}, {"c", "333"}}));
  EXPECT_THAT(multi.versions(), ElementsAre(1, 1, 1));
  EXPECT_EQ(multi.max_token(), 3u);

  ASSERT_OK_AND_ASSIGN(auto fenced, Read(*stub_, "r", "b", 4));
  EXPECT_EQ(fenced.value(), "22");
  EXPECT_EQ(fenced.max_token(), 4u);
  EXPECT_THAT(Put(*stub_, "r", 3, "a", "late"), StatusIs(absl::StatusCode::kAborted));

  v1::ListRequest list;
  list.set_resource("r");
  list.set_page_size(2);
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  v1::ListResponse page;
  ASSERT_TRUE(stub_->List(&ctx, list, &page).ok());
  ASSERT_EQ(page.keys_size(), 2);
  EXPECT_EQ(page.keys(0).key(), "a");
  EXPECT_EQ(page.keys(1).size_bytes(), 2u);
  EXPECT_FALSE(page.next_page_token().empty());

  ASSERT_OK_AND_ASSIGN(auto described, Describe(*stub_, "r"));
  EXPECT_EQ(described.max_token(), 4u);
  EXPECT_EQ(described.key_count(), 3u);
  EXPECT_EQ(described.total_bytes(), 6u);
}

// gRPC 1.51's callback API answers a request whose bytes do not parse with
// UNIMPLEMENTED and no message; common/server/malformed_request_interceptor.h
// makes it INVALID_ARGUMENT naming the message type. Found by the bad-input
// conformance test. A method that does not exist stays UNIMPLEMENTED.
TEST_F(GatewayApiTest, RequestThatDoesNotParseIsInvalidArgumentNamingItsType) {
  StartServer();
  auto channel = testing::OwnChannel(server_->address());
  ASSERT_THAT(channel, IsOk());

  // Field 1, 5 bytes long, and only 2 of them.
  testing::RawReply malformed = testing::RawUnaryCall(
      *channel, "/fencegate.v1.Gateway/Write", std::string("\x0a\x05") + "ab");
  testing::RawReply unknown =
      testing::RawUnaryCall(*channel, "/fencegate.v1.Gateway/NoSuchMethod", "");

  EXPECT_EQ(malformed.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(malformed.status.error_message(),
              HasSubstr("not a valid fencegate.v1.WriteRequest"));
  EXPECT_EQ(unknown.status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(Put(*stub_, "r", 1, "k", "v"), IsOk());  // and it still serves
}

// The interceptor above must leave streams alone: a bidi stream's read at
// the end of the client's stream also reports no message, and server
// reflection (grpcurl) ends every call that way.
TEST_F(GatewayApiTest, ServerReflectionListsTheGatewayService) {
  StartServer();
  auto channel = testing::OwnChannel(server_->address());
  ASSERT_THAT(channel, IsOk());
  // ServerReflectionRequest{list_services = "*"}: field 7, a string.
  testing::RawStreamReply reply = testing::RawStreamingCall(
      *channel, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      {std::string("\x3a\x01*")});
  EXPECT_TRUE(reply.status.ok()) << reply.status.error_code() << " "
                                 << reply.status.error_message();
  ASSERT_EQ(reply.responses.size(), 1u);
  EXPECT_THAT(reply.responses[0], HasSubstr("fencegate.v1.Gateway"));
}

TEST_F(GatewayApiTest, HealthServiceAnswersServing) {
  StartServer();
  ASSERT_OK_AND_ASSIGN(testing::Serving serving,
                       testing::HealthStatus(grpc::CreateChannel(
                           server_->address(), grpc::InsecureChannelCredentials())));
  EXPECT_EQ(serving, testing::Serving::kServing);
}

// gRPC waits for connected clients until the grace period ends, so the
// grace is short here; what matters is exit status 0 and the data.
TEST_F(GatewayApiTest, SigtermStopsCleanlyAndKeepsData) {
  StartServer({"--shutdown_grace=1s"});
  ASSERT_THAT(Put(*stub_, "r", 8, "k", "kept"), IsOk());

  EXPECT_THAT(server_->Terminate(), IsOk());

  StartServer();
  ASSERT_OK_AND_ASSIGN(auto read, Read(*stub_, "r", "k"));
  EXPECT_EQ(read.value(), "kept");
  EXPECT_EQ(read.max_token(), 8u);
  EXPECT_THAT(Put(*stub_, "r", 7, "k", "stale"), StatusIs(absl::StatusCode::kAborted));
}

}  // namespace
}  // namespace fencegate
