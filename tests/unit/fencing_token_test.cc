// The text form of a fencing token (client/fencing_token.h): the lease's
// mode rides as a prefix, and every text from before lock kinds still
// parses, as an exclusive lease's token.
#include "fencegate/client/fencing_token.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::client {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

const TokenSignature kSignature{"k1", std::string(32, '\x5a')};

TEST(FencingTokenTest, OldTextsParseAsExclusive) {
  ASSERT_OK_AND_ASSIGN(SignedToken plain, ParseFencingToken("42"));
  EXPECT_EQ(plain.token, 42u);
  EXPECT_EQ(plain.mode, LeaseMode::kExclusive);
  const std::string signed_text = FormatFencingToken(42, kSignature);
  EXPECT_EQ(signed_text, "42.k1.WlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlo");
  ASSERT_OK_AND_ASSIGN(SignedToken parsed, ParseFencingToken(signed_text));
  EXPECT_EQ(parsed.mode, LeaseMode::kExclusive);
  EXPECT_EQ(parsed.signature.mac, kSignature.mac);
  ASSERT_OK_AND_ASSIGN(SignedToken explicit_mode, ParseFencingToken("exclusive:42"));
  EXPECT_EQ(explicit_mode.mode, LeaseMode::kExclusive);
}

TEST(FencingTokenTest, SharedAndPermitTokensCarryTheirModeBothWays) {
  EXPECT_EQ(FormatFencingToken(42, {}, LeaseMode::kShared), "shared:42");
  EXPECT_EQ(FormatFencingToken(42, {}, LeaseMode::kPermit), "permit:42");
  for (LeaseMode mode : {LeaseMode::kExclusive, LeaseMode::kShared, LeaseMode::kPermit}) {
    const std::string text = FormatFencingToken(7, kSignature, mode);
    ASSERT_OK_AND_ASSIGN(SignedToken parsed, ParseFencingToken(text));
    EXPECT_EQ(parsed.token, 7u) << text;
    EXPECT_EQ(parsed.mode, mode) << text;
    EXPECT_EQ(parsed.signature.key_id, "k1") << text;
    EXPECT_EQ(parsed.signature.mac, kSignature.mac) << text;
  }
}

// Found by the fuzzer: a ':' in the key id (after the token) is the key
// id's, not a mode, so an exclusive token whose key id has one formats
// (without a prefix) into text that parses back the same.
TEST(FencingTokenTest, AColonInTheKeyIdIsNotAMode) {
  ASSERT_OK_AND_ASSIGN(SignedToken parsed,
                       ParseFencingToken("exclusive:7.shared:k.e.EA"));
  EXPECT_EQ(parsed.mode, LeaseMode::kExclusive);
  EXPECT_EQ(parsed.signature.key_id, "shared:k.e");
  const std::string text = FormatFencingToken(7, parsed.signature, parsed.mode);
  EXPECT_EQ(text, "7.shared:k.e.EA");
  ASSERT_OK_AND_ASSIGN(SignedToken again, ParseFencingToken(text));
  EXPECT_EQ(again.mode, LeaseMode::kExclusive);
  EXPECT_EQ(again.signature.key_id, "shared:k.e");
  EXPECT_EQ(again.signature.mac, parsed.signature.mac);
}

TEST(FencingTokenTest, AnUnknownModeIsRefusedNamingTheField) {
  EXPECT_THAT(ParseFencingToken("reader:42", "--token"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--token='reader:42': the mode before ':'")));
  EXPECT_THAT(ParseFencingToken("shared:", "--token"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a number")));
  EXPECT_THAT(ParseFencingToken("shared:shared:42"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fencegate::client
