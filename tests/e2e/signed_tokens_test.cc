// Signed fencing tokens with the real binaries: both servers read a key file
// (--signing_keys); the lock service signs every grant, the gateway accepts a
// token only with a valid signature for that exact resource, and Renew and
// Release need one too. Forged, unsigned, tampered, cross-resource and
// expired-key tokens get PERMISSION_DENIED and change nothing. Keys rotate
// by editing the file and sending SIGHUP.
#include <signal.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/poll.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "tests/e2e/own_servers_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

class SignedTokensTest : public OwnServersTest {
 protected:
  // Fresh random keys named `ids`; the first is the signing key.
  static std::vector<std::string> NewKeys(const std::vector<std::string>& ids) {
    std::vector<std::string> lines;
    for (size_t i = 0; i < ids.size(); ++i) {
      absl::StatusOr<std::string> line = NewKeyLine(ids[i], /*sign=*/i == 0);
      EXPECT_THAT(line, IsOk());
      lines.push_back(line.ok() ? *line : "");
    }
    return lines;
  }

  void WriteFile(const std::string& name, const std::vector<std::string>& lines) {
    std::ofstream out(dir_.File(name));
    out << absl::StrJoin(lines, "\n") << "\n";
  }

  void StartServers(const std::vector<std::string>& lock_keys,
                    const std::vector<std::string>& gateway_keys) {
    WriteFile("lock-keys.txt", lock_keys);
    WriteFile("gateway-keys.txt", gateway_keys);
    StartLockService({"--signing_keys=" + dir_.File("lock-keys.txt")});
    StartGateway({"--signing_keys=" + dir_.File("gateway-keys.txt")});
  }

  // A granted token with its signature, as a Fencing for the gateway.
  client::Fencing MustAcquire(const std::string& resource) {
    client::AcquireOptions options;
    options.ttl = absl::Seconds(60);
    absl::StatusOr<client::AcquireOutcome> outcome =
        lock_->Acquire(resource, "holder-" + resource, options);
    EXPECT_TRUE(outcome.ok() && outcome->acquired) << outcome.status();
    if (!outcome.ok()) return client::Fencing{resource, 0, {}};
    return client::Fencing{resource, outcome->token, outcome->signature};
  }

  std::string ValueOf(const std::string& resource, const std::string& key) {
    absl::StatusOr<client::ReadResult> read = gateway_client_->ReadUnfenced(resource, key);
    EXPECT_THAT(read, IsOk());
    return read.ok() ? read->value : "";
  }

  static void ExpectDenied(const absl::Status& status, const std::string& says) {
    EXPECT_TRUE(client::IsBadSignature(status)) << status;
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(says)));
  }

  // SIGHUP: the server re-reads its key file.
  static void Reload(testing::ServerProcess& server) { server.process().Signal(SIGHUP); }
};

TEST_F(SignedTokensTest, ForgedUnsignedTamperedAndCrossResourceTokensChangeNothing) {
  std::vector<std::string> keys = NewKeys({"k1"});
  StartServers(keys, keys);
  const client::Fencing orders = MustAcquire("orders");
  ASSERT_FALSE(orders.signature.empty());
  EXPECT_EQ(orders.signature.key_id, "k1");
  ASSERT_THAT(gateway_client_->Put(orders, "total", "100"), IsOk());

  // A client that made up a huge token, with no signature or a forged one.
  const uint64_t huge = uint64_t{1} << 62;
  ExpectDenied(gateway_client_->Put({"orders", huge, {}}, "total", "0").status(),
               "carries no signature");
  ExpectDenied(
      gateway_client_->Put({"orders", huge, {"k1", std::string(32, 'x')}}, "total", "0")
          .status(),
      "does not match");
  // The real signature on a raised token.
  ExpectDenied(gateway_client_->Put({"orders", orders.token + 1, orders.signature},
                                    "total", "0")
                   .status(),
               "does not match");
  // A genuine grant, for another resource.
  const client::Fencing invoices = MustAcquire("invoices");
  ASSERT_GT(invoices.token, orders.token);
  ExpectDenied(gateway_client_->Put({"orders", invoices.token, invoices.signature},
                                    "total", "0")
                   .status(),
               "does not match");
  // Fence and fenced reads check the same way.
  ExpectDenied(gateway_client_->Fence({"orders", huge, {}}).status(), "no signature");
  ExpectDenied(
      gateway_client_->Read({"orders", invoices.token, invoices.signature}, "total")
          .status(),
      "does not match");

  // Nothing moved: the fence is the honest holder's, the data its write.
  EXPECT_EQ(FenceOf("orders"), orders.token);
  EXPECT_EQ(ValueOf("orders", "total"), "100");
  EXPECT_THAT(gateway_client_->Put(orders, "total", "101"), IsOk());
}

TEST_F(SignedTokensTest, RenewAndReleaseNeedTheGrantsSignature) {
  std::vector<std::string> keys = NewKeys({"k1"});
  StartServers(keys, keys);
  const client::Fencing held = MustAcquire("r");
  // Someone who read the token from Describe, but has no signature.
  ASSERT_OK_AND_ASSIGN(client::LockState state, lock_->Describe("r"));
  ASSERT_EQ(state.token, held.token);
  ExpectDenied(lock_->Release("r", state.token).status(), "carries no signature");
  ExpectDenied(lock_
                   ->Renew("r", state.token, absl::Seconds(1), absl::InfiniteDuration(),
                           {"k1", std::string(32, 'x')})
                   .status(),
               "does not match");
  ASSERT_OK_AND_ASSIGN(state, lock_->Describe("r"));
  EXPECT_TRUE(state.held);
  EXPECT_EQ(state.token, held.token);
  EXPECT_GT(state.remaining, absl::Seconds(30));  // not shortened by the forged renew
  EXPECT_THAT(lock_->Renew("r", held.token, absl::Seconds(30), absl::InfiniteDuration(),
                           held.signature),
              IsOk());
  EXPECT_THAT(lock_->Release("r", held.token, "", held.signature), IsOk());
}

// A shared lease end to end with signing on: its signature binds its mode,
// the Lease renews and releases with it, and the gateway lets its token
// read, not write; presented as exclusive, the signature does not match.
TEST_F(SignedTokensTest, ASharedLeaseReadsRenewsAndReleasesWithItsModeSigned) {
  std::vector<std::string> keys = NewKeys({"k1"});
  StartServers(keys, keys);
  const client::Fencing writer = MustAcquire("orders");
  ASSERT_THAT(gateway_client_->Put(writer, "total", "100"), IsOk());
  ASSERT_THAT(lock_->Release("orders", writer.token, "", writer.signature), IsOk());
  client::AcquireOptions shared;
  shared.mode = client::LeaseMode::kShared;
  absl::StatusOr<std::unique_ptr<client::Lease>> lease =
      lock_->AcquireLease("orders", "reader", shared);
  ASSERT_THAT(lease, IsOk());
  EXPECT_EQ((*lease)->mode(), client::LeaseMode::kShared);
  ASSERT_THAT((*lease)->Renew(), IsOk());
  const client::Fencing reading = client::FencingOf(**lease);
  EXPECT_EQ(reading.mode, client::LeaseMode::kShared);
  absl::StatusOr<client::ReadResult> read = gateway_client_->Read(reading, "total");
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(read->value, "100");
  EXPECT_THAT(gateway_client_->Put(reading, "total", "0").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("mode")));
  client::Fencing claimed = reading;
  claimed.mode = client::LeaseMode::kExclusive;
  ExpectDenied(gateway_client_->Put(claimed, "total", "0").status(), "does not match");
  ASSERT_THAT((*lease)->Release(), IsOk());
  EXPECT_FALSE(lock_->Describe("orders")->held);
}

TEST_F(SignedTokensTest, TokenSignedWithAnExpiredKeyIsDenied) {
  std::vector<std::string> lock_keys = NewKeys({"old"});
  // The gateway's file says the key was retired yesterday.
  const std::string yesterday = FormatKeyTime(absl::Now() - absl::Hours(24));
  std::string retired = lock_keys[0].substr(0, lock_keys[0].rfind(" sign"));
  StartServers(lock_keys, {absl::StrCat(retired, " not_after=", yesterday)});
  const client::Fencing token = MustAcquire("r");
  ExpectDenied(gateway_client_->Put(token, "k", "v").status(), "expired at " + yesterday);
  EXPECT_EQ(FenceOf("r"), 0u);
}

TEST_F(SignedTokensTest, RotationAcceptsBothKeysDuringTheOverlapAndNotTheOldAfter) {
  const std::vector<std::string> old_only = NewKeys({"old"});
  const std::vector<std::string> new_only = NewKeys({"new"});
  auto unsigned_line = [](const std::string& line) {
    return line.substr(0, line.rfind(" sign"));
  };
  StartServers(old_only, {unsigned_line(old_only[0])});
  const client::Fencing before = MustAcquire("a");
  EXPECT_EQ(before.signature.key_id, "old");
  ASSERT_THAT(gateway_client_->Put(before, "k", "1"), IsOk());

  // Step 1: the gateway learns the new key. Step 2: the lock service signs
  // with it, keeping the old one for the leases it signed.
  WriteFile("gateway-keys.txt", {unsigned_line(old_only[0]), unsigned_line(new_only[0])});
  Reload(*gateway_);
  WriteFile("lock-keys.txt", {new_only[0], unsigned_line(old_only[0])});
  Reload(*lockservice_);
  client::Fencing after;
  int n = 0;
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    after = MustAcquire(absl::StrCat("b", n++));
                    return after.signature.key_id == "new";
                  },
                  absl::Seconds(30), "the lock service signing with the new key"),
              IsOk());
  // Both are accepted during the overlap (the gateway may still be
  // reloading: wait for the new key there).
  ASSERT_THAT(testing::PollUntil(
                  [&] { return gateway_client_->Put(after, "k", "2").ok(); },
                  absl::Seconds(30), "the gateway accepting the new key"),
              IsOk());
  EXPECT_THAT(gateway_client_->Put(before, "k", "3"), IsOk());
  // A live lease moves to the new key when it renews.
  ASSERT_OK_AND_ASSIGN(client::RenewOutcome renewed,
                       lock_->Renew("a", before.token, absl::Seconds(60),
                                    absl::InfiniteDuration(), before.signature));
  EXPECT_EQ(renewed.signature.key_id, "new");
  const client::Fencing moved{"a", before.token, renewed.signature};

  // Step 3: every lease has renewed (or ended) since; the old key goes.
  WriteFile("gateway-keys.txt", {unsigned_line(new_only[0])});
  Reload(*gateway_);
  absl::Status refused;
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    refused = gateway_client_->Fence(before).status();
                    return !refused.ok();
                  },
                  absl::Seconds(30), "the gateway refusing the old key"),
              IsOk());
  ExpectDenied(refused, "key 'old'");
  EXPECT_THAT(gateway_client_->Put(after, "k", "4"), IsOk());
  EXPECT_THAT(gateway_client_->Put(moved, "k", "5"), IsOk());
}

TEST_F(SignedTokensTest, ABadKeyFileIsRefusedAtStartAndOnReloadKeepsTheOldKeys) {
  WriteFile("bad-keys.txt", {"k1 not-hex"});
  auto refused = testing::ServerProcess::Start(
      FENCEGATE_GATEWAY_BIN,
      {"--db=" + dir_.File("g.db"), "--signing_keys=" + dir_.File("bad-keys.txt")},
      dir_.path(), "bad-gateway", 0, absl::Seconds(30));
  EXPECT_FALSE(refused.ok());

  std::vector<std::string> keys = NewKeys({"k1"});
  StartServers(keys, keys);
  WriteFile("gateway-keys.txt", {"k1 not-hex"});
  Reload(*gateway_);
  ASSERT_THAT(testing::PollUntil(
                  [&] {
                    return gateway_->LogTail().find("keys not reloaded") !=
                           std::string::npos;
                  },
                  absl::Seconds(30), "the gateway logging the failed reload"),
              IsOk());
  EXPECT_THAT(gateway_->LogTail(), HasSubstr("gateway-keys.txt line 1"));
  EXPECT_THAT(gateway_client_->Put(MustAcquire("r"), "k", "v"), IsOk());
}

}  // namespace
}  // namespace fencegate::e2e
