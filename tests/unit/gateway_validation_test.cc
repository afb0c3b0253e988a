// Every bad input to the FencedStore is answered with INVALID_ARGUMENT whose
// ErrorInfo names the field and whose message names the limit, and none of
// them reaches storage.
#include <string>
#include <vector>

#include "common/base/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gateway_store_fixture.h"

namespace fencegate::gateway {
namespace {

using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

constexpr uint64_t kTooBigToken = uint64_t{1} << 63;

class GatewayValidationTest : public GatewayStoreTest {
 protected:
  void SetUp() override {
    limits_.max_resource_bytes = 16;
    limits_.max_key_bytes = 8;
    limits_.max_value_bytes = 32;
    limits_.max_mutations = 3;
    limits_.max_request_bytes = 64;
    limits_.default_page_size = 5;
    limits_.max_page_size = 10;
    GatewayStoreTest::SetUp();
  }

  // Expects INVALID_ARGUMENT naming `field`, with `words` in the message.
  template <typename T>
  void ExpectInvalid(const absl::StatusOr<T>& result, const std::string& field,
                     const std::string& words) {
    EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(words)));
    std::optional<ErrorInfo> info = GetErrorInfo(result.status());
    ASSERT_TRUE(info.has_value()) << result.status();
    EXPECT_EQ(info->reason, ErrorReason::kInvalidField);
    EXPECT_EQ(info->field, field) << result.status();
  }

  void TearDown() override {
    // Bad input never reaches storage.
    EXPECT_EQ(faulty_->commits(), 0);
    EXPECT_TRUE(faulty_->applied().empty());
    GatewayStoreTest::TearDown();
  }
};

TEST_F(GatewayValidationTest, Resource) {
  ExpectInvalid(Write("", 1, Put("k", "v")), "resource", "1 to 16 bytes");
  ExpectInvalid(Write(std::string(17, 'r'), 1, Put("k", "v")), "resource",
                "the limit is 16 bytes");
  ExpectInvalid(Write("bad\nname", 1, Put("k", "v")), "resource", "control character");
  ExpectInvalid(Read("", "k"), "resource", "1 to 16");
  ExpectInvalid(Fence(std::string(17, 'r'), 1), "resource", "limit is 16");
  ExpectInvalid(store_->List(ListArgs{"", 0, ""}), "resource", "1 to 16");
  ExpectInvalid(store_->Describe(""), "resource", "1 to 16");
}

TEST_F(GatewayValidationTest, Token) {
  ExpectInvalid(Write("r", 0, Put("k", "v")), "token", "tokens start at 1");
  ExpectInvalid(Write("r", kTooBigToken, Put("k", "v")), "token",
                "up to 9223372036854775807");
  ExpectInvalid(Fence("r", 0), "token", "tokens start at 1");
  ExpectInvalid(Read("r", "k", kTooBigToken), "token", "up to");
}

TEST_F(GatewayValidationTest, Key) {
  ExpectInvalid(Write("r", 1, Put("", "v")), "mutation.key", "1 to 8 bytes");
  ExpectInvalid(Write("r", 1, Put("123456789", "v")), "mutation.key",
                "the limit is 8 bytes");
  ExpectInvalid(Write("r", 1, Del("tab\there")), "mutation.key", "control character");
  ExpectInvalid(Read("r", ""), "key", "1 to 8");
  ExpectInvalid(MultiWrite("r", 1, {Put("a", "1"), Put("b", "2"), Put("", "3")}),
                "mutations[2].key", "1 to 8");
}

TEST_F(GatewayValidationTest, Value) {
  ExpectInvalid(Write("r", 1, Put("k", std::string(33, 'v'))), "mutation.value",
                "33 bytes; the limit is 32 bytes (--max_value_bytes)");
  ExpectInvalid(MultiWrite("r", 1, {Put("a", "1"), Put("b", std::string(33, 'v'))}),
                "mutations[1].value", "the limit is 32");
}

TEST_F(GatewayValidationTest, MutationWithNeitherValueNorDelete) {
  ExpectInvalid(Write("r", 1, Unset("k")), "mutation",
                "neither a value nor delete=true");
  ExpectInvalid(MultiWrite("r", 1, {Put("a", "1"), Unset("b")}), "mutations[1]",
                "set value to put the key");
}

TEST_F(GatewayValidationTest, MutationCountAndSize) {
  ExpectInvalid(MultiWrite("r", 1, {}), "mutations", "empty");
  ExpectInvalid(
      MultiWrite("r", 1, {Put("a", "1"), Put("b", "2"), Put("c", "3"), Put("d", "4")}),
      "mutations", "the limit is 3 per MultiWrite (--max_mutations)");
  const std::string value(30, 'v');
  ExpectInvalid(MultiWrite("r", 1, {Put("a", value), Put("b", value), Put("c", value)}),
                "mutations", "93 bytes of keys and values; the limit is 64");
}

TEST_F(GatewayValidationTest, DuplicateKeyInOneMultiWrite) {
  ExpectInvalid(MultiWrite("r", 1, {Put("a", "1"), Put("b", "2"), Del("a")}),
                "mutations[2].key", "repeats mutations[0].key");
}

// Write, MultiWrite and Fence need an exclusive lease's token; a fenced
// Read takes an exclusive or a shared one's; a permit's token is refused
// everywhere (docs/gateway.md, "Shared tokens").
TEST_F(GatewayValidationTest, Mode) {
  const std::string cannot_write = "a shared lease's token cannot write";
  ExpectInvalid(Write("r", 7, Put("k", "v"), Shared()), "mode", cannot_write);
  ExpectInvalid(MultiWrite("r", 7, {Put("a", "1")}, Shared()), "mode", cannot_write);
  ExpectInvalid(Fence("r", 7, Shared()), "mode", cannot_write);

  const Claim permit{2, {}};
  const std::string refused = "the gateway refuses a permit's token";
  ExpectInvalid(Write("r", 7, Put("k", "v"), permit), "mode", refused);
  ExpectInvalid(MultiWrite("r", 7, {Put("a", "1")}, permit), "mode", refused);
  ExpectInvalid(Fence("r", 7, permit), "mode", refused);
  ExpectInvalid(Read("r", "k", 7, permit), "mode", refused);

  const Claim unknown{7, {}};
  ExpectInvalid(Write("r", 7, Put("k", "v"), unknown), "mode", "mode is 7");
  ExpectInvalid(Read("r", "k", 7, unknown), "mode", "does not know");
  ExpectInvalid(Fence("r", 7, Claim{-1, {}}), "mode", "mode is -1");
  // A mode goes with a token: not with a plain read.
  ExpectInvalid(Read("r", "k", 0, Shared()), "mode", "token is 0 (a plain read)");
  // The field checks before it still come first.
  ExpectInvalid(Write("r", 0, Put("k", "v"), Shared()), "token", "tokens start at 1");
}

TEST_F(GatewayValidationTest, ListPaging) {
  ExpectInvalid(store_->List(ListArgs{"r", 11, ""}), "page_size",
                "the limit is 10 (--max_page_size)");
  ExpectInvalid(store_->List(ListArgs{"r", 0, "bad\ntoken"}), "page_token",
                "next_page_token unchanged");
}

}  // namespace
}  // namespace fencegate::gateway
