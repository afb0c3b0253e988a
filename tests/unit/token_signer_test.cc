// Signed fencing tokens: the key file and the HMAC that binds resource,
// token and key. The wall clock for key expiry is injected.
#include "common/core/token_signer.h"

#include <string>

#include "absl/strings/escaping.h"
#include "common/base/errors.h"
#include "common/signing/signing_keys.h"
#include "fencegate/lease_mode.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr LeaseMode kExclusive = LeaseMode::kExclusive;
constexpr LeaseMode kShared = LeaseMode::kShared;
constexpr LeaseMode kPermit = LeaseMode::kPermit;

const std::string kSecret1(64, 'a');  // 32 bytes in hex
const std::string kSecret2(64, 'b');
// Python: hmac.new(bytes.fromhex("aa" * 32), b"fencegate.v1.token\x00\x02k1" +
// struct.pack(">Q", 6) + b"orders" + struct.pack(">Q", 42), "sha256").hexdigest()
constexpr char kOldOrders42Mac[] =
    "f8f05e55dc61a4c558af6ad5e0d57634823657f114768e872005dcce17618fcb";

KeyRing MustParse(const std::string& text) {
  absl::StatusOr<KeyRing> ring = KeyRing::Parse(text, "keys.txt");
  EXPECT_THAT(ring, IsOk());
  return ring.ok() ? *std::move(ring) : KeyRing();
}

bool IsBadSignature(const absl::Status& status) {
  auto info = GetErrorInfo(status);
  return status.code() == absl::StatusCode::kPermissionDenied && info &&
         info->reason == ErrorReason::kBadSignature;
}

TEST(TokenSignerTest, ASignedTokenVerifiesForItsResourceOnly) {
  TokenSigner signer(MustParse("k1 " + kSecret1 + " sign"));
  ASSERT_OK_AND_ASSIGN(TokenSignature sig, signer.Sign("orders", 42, kExclusive));
  EXPECT_EQ(sig.key_id, "k1");
  EXPECT_EQ(sig.mac.size(), 32u);
  EXPECT_THAT(signer.Verify("orders", 42, kExclusive, sig), IsOk());

  absl::Status tampered = signer.Verify("orders", 43, kExclusive, sig);
  EXPECT_TRUE(IsBadSignature(tampered)) << tampered;
  EXPECT_THAT(tampered, StatusIs(absl::StatusCode::kPermissionDenied,
                                 HasSubstr("does not match token 43")));
  absl::Status moved = signer.Verify("invoices", 42, kExclusive, sig);
  EXPECT_TRUE(IsBadSignature(moved)) << moved;
  // A prefix of the resource, or the token's bytes moved into it, differ too.
  EXPECT_TRUE(IsBadSignature(signer.Verify("order", 42, kExclusive, sig)));
}

// The bytes an exclusive token's signature covers are those of the
// releases before lock kinds: a signature they made (this one: HMAC-SHA256
// under 32 bytes of 0xaa over "fencegate.v1.token" 0x00, 0x02 "k1",
// u64be(6) "orders", u64be(42), computed apart from this code) still
// verifies, as an exclusive token's only.
TEST(TokenSignerTest, ASignatureFromBeforeLockKindsStillVerifiesAsExclusive) {
  TokenSigner signer(MustParse("k1 " + kSecret1 + " sign"));
  const TokenSignature old{"k1", absl::HexStringToBytes(kOldOrders42Mac)};
  EXPECT_THAT(signer.Verify("orders", 42, kExclusive, old), IsOk());
  ASSERT_OK_AND_ASSIGN(TokenSignature now, signer.Sign("orders", 42, kExclusive));
  EXPECT_EQ(absl::BytesToHexString(now.mac), kOldOrders42Mac);
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kShared, old)));
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kPermit, old)));
}

TEST(TokenSignerTest, TheModeIsBoundInTheSignature) {
  TokenSigner signer(MustParse("k1 " + kSecret1 + " sign"));
  ASSERT_OK_AND_ASSIGN(TokenSignature shared, signer.Sign("orders", 42, kShared));
  ASSERT_OK_AND_ASSIGN(TokenSignature permit, signer.Sign("orders", 42, kPermit));
  ASSERT_OK_AND_ASSIGN(TokenSignature exclusive, signer.Sign("orders", 42, kExclusive));
  EXPECT_THAT(signer.Verify("orders", 42, kShared, shared), IsOk());
  EXPECT_THAT(signer.Verify("orders", 42, kPermit, permit), IsOk());
  EXPECT_NE(shared.mac, exclusive.mac);
  EXPECT_NE(shared.mac, permit.mac);
  EXPECT_NE(permit.mac, exclusive.mac);

  // A shared lease's token passed off as an exclusive one's (which may
  // write at the gateway) is refused, and the message says which mode.
  absl::Status as_exclusive = signer.Verify("orders", 42, kExclusive, shared);
  EXPECT_TRUE(IsBadSignature(as_exclusive)) << as_exclusive;
  EXPECT_THAT(as_exclusive.message(), AllOf(HasSubstr("does not match token 42"),
                                            HasSubstr("with mode EXCLUSIVE")));
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kExclusive, permit)));
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kPermit, shared)));
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kShared, permit)));
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 42, kShared, exclusive)));
  // The mode byte cannot stand in for a token or resource byte either.
  EXPECT_TRUE(IsBadSignature(signer.Verify("orders", 43, kShared, shared)));
  EXPECT_TRUE(IsBadSignature(signer.Verify("order", 42, kShared, shared)));
}

TEST(TokenSignerTest, UnsignedForgedAndMalformedSignaturesAreRefused) {
  TokenSigner signer(MustParse("k1 " + kSecret1 + " sign"));
  absl::Status unsigned_token = signer.Verify("r", 7, kExclusive, TokenSignature{});
  EXPECT_TRUE(IsBadSignature(unsigned_token));
  EXPECT_THAT(unsigned_token.message(), HasSubstr("carries no signature"));

  TokenSignature forged{"k1", std::string(32, '\x5a')};
  EXPECT_TRUE(IsBadSignature(signer.Verify("r", 7, kExclusive, forged)));
  ASSERT_OK_AND_ASSIGN(TokenSignature real, signer.Sign("r", 7, kExclusive));
  TokenSignature truncated{"k1", real.mac.substr(0, 16)};
  EXPECT_TRUE(IsBadSignature(signer.Verify("r", 7, kExclusive, truncated)));
  TokenSignature no_key_id{"", real.mac};
  EXPECT_TRUE(IsBadSignature(signer.Verify("r", 7, kExclusive, no_key_id)));
}

TEST(TokenSignerTest, AnotherKeysSignatureIsRefused) {
  TokenSigner lock_service(MustParse("k9 " + kSecret2 + " sign"));
  TokenSigner gateway(MustParse("k1 " + kSecret1));
  ASSERT_OK_AND_ASSIGN(TokenSignature sig, lock_service.Sign("r", 5, kExclusive));
  absl::Status status = gateway.Verify("r", 5, kExclusive, sig);
  EXPECT_TRUE(IsBadSignature(status));
  EXPECT_THAT(status.message(), HasSubstr("key 'k9'"));
  // Same id, other secret: a forger who knows the id but not the key.
  TokenSigner impostor(MustParse("k1 " + kSecret2 + " sign"));
  ASSERT_OK_AND_ASSIGN(TokenSignature forged, impostor.Sign("r", 5, kExclusive));
  EXPECT_TRUE(IsBadSignature(gateway.Verify("r", 5, kExclusive, forged)));
}

TEST(TokenSignerTest, AKeyIdOfAnyBytesIsAnUnknownKeyNamedEscapedAndCut) {
  // The wire carries key ids as bytes: not UTF-8, a megabyte long, quotes.
  TokenSigner signer(MustParse("k1 " + kSecret1 + " sign"));
  ASSERT_OK_AND_ASSIGN(TokenSignature real, signer.Sign("r", 5, kExclusive));
  absl::Status not_utf8 =
      signer.Verify("r", 5, kExclusive, TokenSignature{"k1\xff\xfe", real.mac});
  EXPECT_TRUE(IsBadSignature(not_utf8)) << not_utf8;
  EXPECT_THAT(not_utf8.message(),
              AllOf(HasSubstr("signature.key_id"), HasSubstr("key 'k1\\xff\\xfe'"),
                    HasSubstr("does not accept")));

  absl::Status huge = signer.Verify(
      "r", 5, kExclusive, TokenSignature{std::string(1 << 20, '\x80'), real.mac});
  EXPECT_TRUE(IsBadSignature(huge)) << huge.code();
  EXPECT_THAT(huge.message(), AllOf(HasSubstr("signature.key_id"),
                                    HasSubstr("(cut; 1048576 bytes in all)")));
  EXPECT_LT(huge.message().size(), 1000u);  // 64 bytes shown, escaped

  absl::Status quote =
      signer.Verify("r", 5, kExclusive, TokenSignature{"k1' or '1", real.mac});
  EXPECT_THAT(quote.message(), HasSubstr("key 'k1\\' or \\'1'"));
}

TEST(TokenSignerTest, ExpiredKeyNeitherSignsNorVerifies) {
  absl::Time now = absl::FromCivil(absl::CivilSecond(2026, 11, 1, 0, 0, 0),
                                   absl::UTCTimeZone());
  TokenSigner signer(
      MustParse("k1 " + kSecret1 + " sign not_after=2026-12-01T00:00:00Z"),
      [&now] { return now; });
  ASSERT_OK_AND_ASSIGN(TokenSignature sig, signer.Sign("r", 1, kExclusive));
  EXPECT_THAT(signer.Verify("r", 1, kExclusive, sig), IsOk());
  now += absl::Hours(24 * 30);  // 2026-12-01: the key has expired
  absl::Status status = signer.Verify("r", 1, kExclusive, sig);
  EXPECT_TRUE(IsBadSignature(status));
  EXPECT_THAT(status.message(), HasSubstr("expired at 2026-12-01T00:00:00Z"));
  EXPECT_THAT(signer.Sign("r", 2, kExclusive),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("expired")));
  EXPECT_THAT(signer.CheckCanSign(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(TokenSignerTest, RotationAcceptsBothKeysDuringTheOverlapAndNotTheOldAfter) {
  TokenSigner lock_service(MustParse("old " + kSecret1 + " sign"));
  TokenSigner gateway(MustParse("old " + kSecret1));
  ASSERT_OK_AND_ASSIGN(TokenSignature before, lock_service.Sign("r", 1, kExclusive));

  // Step 1: gateways learn the new key. Step 2: the lock service signs with it.
  gateway.Replace(MustParse("old " + kSecret1 + "\nnew " + kSecret2));
  lock_service.Replace(MustParse("old " + kSecret1 + "\nnew " + kSecret2 + " sign"));
  ASSERT_OK_AND_ASSIGN(TokenSignature after, lock_service.Sign("r", 2, kExclusive));
  EXPECT_EQ(after.key_id, "new");
  EXPECT_THAT(gateway.Verify("r", 1, kExclusive, before), IsOk());
  EXPECT_THAT(gateway.Verify("r", 2, kExclusive, after), IsOk());

  // Step 3: once every lease signed with the old key is over, it goes.
  gateway.Replace(MustParse("new " + kSecret2));
  EXPECT_TRUE(IsBadSignature(gateway.Verify("r", 1, kExclusive, before)));
  EXPECT_THAT(gateway.Verify("r", 2, kExclusive, after), IsOk());
}

TEST(TokenSignerTest, SigningWithoutASignKeyIsAFailedPrecondition) {
  TokenSigner gateway_only(MustParse("k1 " + kSecret1));
  EXPECT_THAT(gateway_only.Sign("r", 1, kExclusive),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("'sign'")));
  EXPECT_THAT(gateway_only.CheckCanSign(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(SigningKeysTest, BadLinesAreRefusedNamingTheLineAndNeverTheSecret) {
  struct Case {
    std::string text;
    std::string says;
  };
  const Case cases[] = {
      {"k1", "line 1: expected"},
      {"# header\n\nk1 " + kSecret1 + "\nk1 " + kSecret2, "line 4: key id 'k1' appears twice"},
      {"k/1 " + kSecret1, "letters, digits"},
      {std::string(65, 'k') + " " + kSecret1, "key id is 65 bytes; the limit is 64"},
      {"k1 " + std::string(63, 'a'), "is not hex"},
      {"k1 " + std::string(64, 'g'), "is not hex"},
      {"k1 " + std::string(62, 'a'), "31 bytes; it must be 32 to 128"},
      {"k1 " + std::string(258, 'a'), "129 bytes"},
      {"k1 " + kSecret1 + " sign\nk2 " + kSecret2 + " sign", "only one key signs"},
      {"k1 " + kSecret1 + " not_after=tomorrow", "not an RFC 3339 time"},
      {"k1 " + kSecret1 + " signs", "unknown word 'signs'"},
      {"# nothing\n", "holds no key"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<KeyRing> ring = KeyRing::Parse(c.text, "keys.txt");
    EXPECT_THAT(ring.status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("keys.txt"), HasSubstr(c.says),
                               Not(HasSubstr(kSecret1)), Not(HasSubstr(kSecret2)))))
        << c.text;
  }
}

TEST(SigningKeysTest, NewKeyLineParsesAndDescribeShowsNoSecret) {
  ASSERT_OK_AND_ASSIGN(std::string line, NewKeyLine("fresh", true));
  ASSERT_OK_AND_ASSIGN(std::string other, NewKeyLine("other", false));
  KeyRing ring = MustParse(line + "\n" + other + " not_after=2030-01-01T00:00:00Z");
  ASSERT_NE(ring.signing_key(), nullptr);
  EXPECT_EQ(ring.signing_key()->id, "fresh");
  EXPECT_EQ(ring.signing_key()->secret.size(), 32u);
  EXPECT_NE(ring.Find("fresh")->secret, ring.Find("other")->secret);
  EXPECT_EQ(ring.Describe(), "fresh (sign), other (not after 2030-01-01T00:00:00Z)");
}

}  // namespace
}  // namespace fencegate
