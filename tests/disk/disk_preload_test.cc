// The disk-fault preload itself (disk_faults_preload.cc) and the power cut
// (power_cut.h), on a plain file written by disk_probe under the preload:
// faults hit the tracked files only, and a power cut keeps exactly what a
// successful fsync covered, as Linux would after a failed one.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "tests/disk/power_cut.h"
#include "tests/testing/must_run.h"

namespace fencegate::disk {
namespace {

class DiskPreloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto faults = DiskFaults::Create(dir_.File("control"), {File()});
    ASSERT_TRUE(faults.ok()) << faults.status();
    faults_ = *std::move(faults);
  }

  std::string File(const std::string& suffix = "") const {
    return dir_.File("db") + suffix;
  }

  // disk_probe's words for `ops` on File(suffix), under the preload.
  std::string Probe(std::vector<std::string> ops, const std::string& suffix = "") {
    std::vector<std::string> argv = {FENCEGATE_DISK_PROBE, File(suffix)};
    argv.insert(argv.end(), ops.begin(), ops.end());
    std::string out =
        testing::MustRun(argv, absl::Seconds(30), faults_->Env()).stdout_text;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  static std::string Contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  testing::TempDir dir_;
  std::unique_ptr<DiskFaults> faults_;
};

TEST_F(DiskPreloadTest, APowerCutKeepsWhatAnFsyncCoveredAndNothingAfter) {
  EXPECT_EQ(Probe({"w:0:AAAA", "s", "w:4:BBBB", "w:0:CC"}), "ok ok ok ok");
  EXPECT_EQ(Contents(File()), "CCAABBBB");
  ASSERT_TRUE(PowerCutDatabase(File()).ok());
  EXPECT_EQ(Contents(File()), "AAAA");
}

TEST_F(DiskPreloadTest, AFailedFsyncLosesItsWritesEvenWhenTheNextOneSucceeds) {
  faults_->FailNextFsyncs(1);
  EXPECT_EQ(Probe({"w:0:AAAA", "s", "s", "w:4:BBBB", "s"}), "ok EIO ok ok ok");
  EXPECT_EQ(faults_->FsyncEioReturned(), 1);
  ASSERT_TRUE(PowerCutDatabase(File()).ok());
  // AAAA never reached the disk; BBBB did, after a hole.
  EXPECT_EQ(Contents(File()), std::string(4, '\0') + "BBBB");
}

TEST_F(DiskPreloadTest, AWriteAgainAfterAFailedFsyncIsDurable) {
  faults_->FailNextFsyncs(1);
  EXPECT_EQ(Probe({"w:0:AAAA", "s", "w:0:AAAA", "s"}), "ok EIO ok ok");
  ASSERT_TRUE(PowerCutDatabase(File()).ok());
  EXPECT_EQ(Contents(File()), "AAAA");
}

TEST_F(DiskPreloadTest, ATruncateIsDurableOnlyOnceSynced) {
  EXPECT_EQ(Probe({"w:0:AAAABBBB", "s", "t:4"}), "ok ok ok");
  ASSERT_TRUE(PowerCutDatabase(File()).ok());
  EXPECT_EQ(Contents(File()), "AAAABBBB");
  EXPECT_EQ(Probe({"t:4", "s", "w:8:CC"}), "ok ok ok");
  ASSERT_TRUE(PowerCutDatabase(File()).ok());
  EXPECT_EQ(Contents(File()), "AAAA");
}

TEST_F(DiskPreloadTest, AFullDiskRefusesWritesToTheTrackedFilesOnly) {
  faults_->SetFull(true);
  EXPECT_EQ(Probe({"w:0:AAAA", "s"}, "-wal"), "ENOSPC ok");
  EXPECT_EQ(Probe({"w:0:AAAA"}, ".other"), "ok");
  EXPECT_EQ(faults_->EnospcReturned(), 1);
  faults_->SetFull(false);
  EXPECT_EQ(Probe({"w:0:AAAA"}, "-wal"), "ok");
}

TEST_F(DiskPreloadTest, FailedWritesWriteNothing) {
  faults_->FailNextWrites(1);
  EXPECT_EQ(Probe({"w:0:AAAA", "w:0:BB", "s"}, "-journal"), "EIO ok ok");
  EXPECT_EQ(faults_->WriteEioReturned(), 1);
  EXPECT_EQ(Contents(File("-journal")), "BB");
}

}  // namespace
}  // namespace fencegate::disk
