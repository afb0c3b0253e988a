// Lock semantics through real processes and the client library, against
// the real lock service binary: a stale release never frees the newer
// holder; a reentrant acquire returns the same token and counts holds.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::e2e {
namespace {

using ::testing::HasSubstr;

class LockSemanticsTest : public E2eTest {};

TEST_F(LockSemanticsTest, StaleReleaseCannotFreeTheNewerHolder) {
  // The old holder's lease runs out (nobody renews a CLI's lease).
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult old_grant,
      Cli({"acquire", "--resource=r", "--holder=old", "--ttl=300ms", "--json"}));
  ASSERT_EQ(old_grant.exit_code, 0) << old_grant.stderr_text;
  const uint64_t old_token = JsonUint(old_grant.stdout_text, "token");
  ASSERT_GT(old_token, 0u) << old_grant.stdout_text;
  ASSERT_THAT(WaitUntilLeaseGone("r", old_token), testing::IsOk());

  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult new_grant,
      Cli({"acquire", "--resource=r", "--holder=new", "--ttl=60s", "--json"}));
  ASSERT_EQ(new_grant.exit_code, 0) << new_grant.stderr_text;
  const uint64_t new_token = JsonUint(new_grant.stdout_text, "token");
  ASSERT_GT(new_token, old_token);

  // The old holder's late release: refused, and it names the holder.
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult stale,
      Cli({"release", "--resource=r", absl::StrCat("--token=", old_token), "--json"}));
  EXPECT_EQ(stale.exit_code, 2) << stale.stdout_text;
  EXPECT_THAT(stale.stdout_text, HasSubstr("\"reason\":\"lease_lost\""));
  EXPECT_EQ(JsonUint(stale.stdout_text, "current_token"), new_token);

  // Seen by the test itself: the new holder still holds it.
  ASSERT_OK_AND_ASSIGN(client::LockState state, lock_->Describe("r"));
  EXPECT_TRUE(state.held);
  EXPECT_EQ(state.holder, "new");
  EXPECT_EQ(state.token, new_token);
  EXPECT_EQ(state.hold_count, 1u);

  // The new holder's own release still works.
  ASSERT_OK_AND_ASSIGN(
      testing::ProgramResult release,
      Cli({"release", "--resource=r", absl::StrCat("--token=", new_token)}));
  EXPECT_EQ(release.exit_code, 0) << release.stderr_text;
  ASSERT_OK_AND_ASSIGN(client::LockState after, lock_->Describe("r"));
  EXPECT_FALSE(after.held);
}

TEST_F(LockSemanticsTest, ReentrantAcquireThroughTheLibrary) {
  client::AcquireOptions options;
  options.ttl = absl::Seconds(60);
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome first,
                       lock_->Acquire("r", "alice", options));
  ASSERT_TRUE(first.acquired);
  EXPECT_EQ(first.hold_count, 1u);
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome again,
                       lock_->Acquire("r", "alice", options));
  ASSERT_TRUE(again.acquired);
  EXPECT_EQ(again.token, first.token) << "a reentrant acquire keeps the token";
  EXPECT_EQ(again.hold_count, 2u);

  // Someone else is still shut out.
  ASSERT_OK_AND_ASSIGN(client::AcquireOutcome bob, lock_->Acquire("r", "bob", options));
  EXPECT_FALSE(bob.acquired);
  EXPECT_EQ(bob.holder_token, first.token);

  ASSERT_OK_AND_ASSIGN(uint32_t left, lock_->Release("r", first.token));
  EXPECT_EQ(left, 1u);
  ASSERT_OK_AND_ASSIGN(client::LockState state, lock_->Describe("r"));
  EXPECT_TRUE(state.held) << "one release of two holds must not free the lock";
  ASSERT_OK_AND_ASSIGN(left, lock_->Release("r", first.token));
  EXPECT_EQ(left, 0u);
  ASSERT_OK_AND_ASSIGN(state, lock_->Describe("r"));
  EXPECT_FALSE(state.held);
}

}  // namespace
}  // namespace fencegate::e2e
