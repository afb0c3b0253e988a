// The failpoints of the test builds (common/test_hooks/test_hooks.h): a
// failpoint armed with a subject acts only where the code passes that subject,
// which is how the torture harness stalls the one commit that carries its probe
// lease.
#include "common/test_hooks/test_hooks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "harness/log_file.h"
#include "harness/poll.h"

ABSL_DECLARE_FLAG(std::string, failpoint_file);

namespace fencegate::test_hooks {
namespace {

// The hooks read their flags once per process: one file for every test.
const std::string& FailpointFile() {
  static const std::string* path = [] {
    auto* file = new std::string(
        absl::StrCat(::testing::TempDir(), "test_hooks_test.", getpid(), ".failpoint"));
    absl::SetFlag(&FLAGS_failpoint_file, *file);
    return file;
  }();
  return *path;
}

void ArmWith(const std::string& text) {
  ASSERT_TRUE(testing::WriteFileAtomically(FailpointFile(), text + "\n"));
  unlink((FailpointFile() + ".hit").c_str());
}

bool Hit() {
  struct stat st;
  return stat((FailpointFile() + ".hit").c_str(), &st) == 0;
}

bool IsProbe(absl::string_view subject) { return subject == "probe-1"; }
bool IsOther(absl::string_view subject) { return subject == "other"; }

// Runs `failpoint` on a thread of its own; true if it stalled there (then
// disarms it, so it goes on), false if it passed.
bool Stalls(absl::AnyInvocable<void()> failpoint) {
  std::atomic<bool> passed{false};
  std::thread thread([&] {
    failpoint();
    passed.store(true);
  });
  EXPECT_TRUE(testing::PollUntil([&] { return passed.load() || Hit(); },
                                 absl::Seconds(30), "the failpoint to pass or stall")
                  .ok());
  const bool stalled = Hit();
  if (stalled) ArmWith("");
  thread.join();
  return stalled;
}

constexpr char kFailpoint[] = "lock.before_token_commit";

TEST(FailpointOn, StallsOnlyWhereTheSubjectIsThere) {
  ArmWith("stall lock.before_token_commit probe-1");
  EXPECT_FALSE(Stalls([] { FailpointOn(kFailpoint, IsOther); }));
  ArmWith("stall lock.before_token_commit probe-1");
  EXPECT_FALSE(Stalls([] { FailpointOn("lock.before_commit", IsProbe); }));
  ArmWith("stall lock.before_token_commit probe-1");
  EXPECT_TRUE(Stalls([] { FailpointOn(kFailpoint, IsProbe); }));
}

TEST(FailpointOn, WithoutASubjectArmedStallsOnAny) {
  ArmWith("stall lock.before_token_commit");
  EXPECT_TRUE(Stalls([] { FailpointOn(kFailpoint, IsOther); }));
}

TEST(Failpoint, ASubjectlessFailpointActsOnAnySubject) {
  ArmWith("stall lock.before_token_commit probe-1");
  EXPECT_TRUE(Stalls([] { Failpoint(kFailpoint); }));
}

TEST(FailpointOnDeathTest, CrashesOnlyWhereTheSubjectIsThere) {
  ArmWith("crash lock.before_token_commit probe-1");
  EXPECT_EXIT(
      {
        FailpointOn(kFailpoint, IsOther);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(FailpointOn(kFailpoint, IsProbe),
              ::testing::ExitedWithCode(kFailpointExitCode), "crashing");
}

}  // namespace
}  // namespace fencegate::test_hooks
