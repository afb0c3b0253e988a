// What the upgrade tests of the two stores on SQLite share (the lock
// service's SqliteLockStore, lock_store_upgrade_test.cc; the gateway's
// SqliteStorage, gateway_storage_upgrade_test.cc): the store's file made
// from its 0.1.0 fixture before each test, and the two checks every such
// store must pass: 0.1.0's file is migrated on the first open only, and a
// file of a newer format is refused, naming both formats, untouched.
//
// Thread safety: a test fixture, used by its test's thread.
#ifndef FENCEGATE_TESTS_UPGRADE_SQLITE_UPGRADE_TEST_H_
#define FENCEGATE_TESTS_UPGRADE_SQLITE_UPGRADE_TEST_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/build_info/build_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"
#include "tests/testing/status_matchers.h"
#include "tests/upgrade/upgrade_fixtures.h"

namespace fencegate::testing {

// `Store` has Open (through the opener given), format_at_open() and
// kStateFormat.
template <typename Store>
class SqliteUpgradeTest : public ::testing::Test {
 protected:
  using Opener =
      std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string&)>;

  // `fixture`: the 0.1.0 dump in tests/upgrade/; `file`: the store's file
  // name; `open`: opens a Store on a path, as its server does.
  SqliteUpgradeTest(std::string fixture, const std::string& file, Opener open)
      : fixture_(std::move(fixture)), path_(dir_.File(file)), open_(std::move(open)) {}

  void SetUp() override {
    absl::StatusOr<std::string> fixture = ReadFixture(fixture_);
    ASSERT_THAT(fixture, IsOk());
    ASSERT_THAT(MakeSqliteFile(path_, *fixture), IsOk());
  }

  std::string Marker() { return SqliteFormatMarker(path_); }

  absl::StatusOr<std::unique_ptr<Store>> Open() { return open_(path_); }

  // Opens the store on 0.1.0's file and runs `expect` on it.
  void ExpectOnOpen(absl::FunctionRef<void(Store&)> expect) {
    absl::StatusOr<std::unique_ptr<Store>> store = Open();
    ASSERT_THAT(store, IsOk());
    expect(**store);
  }

  // The first open finds no format, migrates, and `expect_state` finds
  // 0.1.0's state in the store; the second finds the format, migrates
  // nothing, finds the same state and leaves the file's bytes as they were.
  void ExpectMigratedOnce(absl::FunctionRef<void(Store&)> expect_state) {
    EXPECT_EQ(Marker(), "");
    {
      absl::StatusOr<std::unique_ptr<Store>> store = Open();
      ASSERT_THAT(store, IsOk());
      EXPECT_FALSE((*store)->format_at_open().marked.has_value());
      EXPECT_TRUE((*store)->format_at_open().migrated());
      expect_state(**store);
    }
    EXPECT_EQ(Marker(), absl::StrCat(Store::kStateFormat));
    const std::string migrated = FileBytes(path_);

    // Opened again: the format is found, nothing is migrated or written.
    {
      absl::StatusOr<std::unique_ptr<Store>> store = Open();
      ASSERT_THAT(store, IsOk());
      EXPECT_EQ((*store)->format_at_open().marked, Store::kStateFormat);
      EXPECT_FALSE((*store)->format_at_open().migrated());
      expect_state(**store);
    }
    EXPECT_TRUE(FileBytes(path_) == migrated) << "the second open wrote to the file";
  }

  // The file marked with the format after Store's: the open is refused
  // naming the file, both formats and what to do, and writes nothing.
  void ExpectANewerFormatRefused() {
    const int64_t newer = Store::kStateFormat + 1;
    ASSERT_THAT(MarkSqliteFormat(path_, newer), IsOk());
    const std::string before = FileBytes(path_);
    EXPECT_THAT(
        Open(),
        StatusIs(
            absl::StatusCode::kFailedPrecondition,
            ::testing::AllOf(
                ::testing::HasSubstr(absl::StrCat(path_, " has state format ", newer)),
                ::testing::HasSubstr(absl::StrCat(
                    ProjectVersion(), " reads formats up to ", Store::kStateFormat)),
                ::testing::HasSubstr("upgrade the binary or restore a backup"))));
    EXPECT_TRUE(FileBytes(path_) == before) << "the refused open wrote to the file";
  }

  TempDir dir_;
  const std::string fixture_;
  const std::string path_;

 private:
  const Opener open_;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_UPGRADE_SQLITE_UPGRADE_TEST_H_
