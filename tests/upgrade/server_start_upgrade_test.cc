// The real server binaries on state of a newer format: each refuses to
// start, saying so on stderr with both formats and its own version, and
// exits non-zero, before it serves anything. The lock service on a SQLite
// file and on etcd (its check before it campaigns: a single-member etcd
// this process starts), the gateway on a SQLite file.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "gateway/sqlite_storage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/run_program.h"
#include "harness/temp_dir.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "lockservice/etcd/etcd_lock_store.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"
#include "tests/upgrade/upgrade_fixtures.h"

namespace fencegate::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Runs `binary` with `args` (and a listener on a free port, no metrics listener)
// to its end: it must not start.
ProgramResult MustNotStart(const std::string& binary, std::vector<std::string> args) {
  std::vector<std::string> argv = {binary, "--listen=127.0.0.1:0",
                                   "--metrics_listen="};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<ProgramResult> result = RunProgram(argv, absl::Seconds(60));
  EXPECT_THAT(result, IsOk());
  if (!result.ok()) return ProgramResult();
  EXPECT_NE(result->exit_code, 0) << result->stderr_text;
  return *result;
}

std::string Refusal(const std::string& program, const std::string& state, int64_t found,
                    int64_t newest) {
  return absl::StrCat("failed to start: FAILED_PRECONDITION: ", state,
                      " has state format ", found, "; this ", program, " ",
                      ProjectVersion(), " reads formats up to ", newest,
                      "; upgrade the binary or restore a backup");
}

// `program` (at `binary`) refuses to start on `fixture` as its SQLite file,
// marked one format past `newest`, naming both, and leaves the file as it was.
void ExpectNewerSqliteFileRefused(const std::string& binary, const std::string& program,
                                  const std::string& fixture, int64_t newest) {
  TempDir dir;
  const std::string path = dir.File("state.db");
  absl::StatusOr<std::string> text = ReadFixture(fixture);
  ASSERT_THAT(text, IsOk());
  ASSERT_THAT(MakeSqliteFile(path, *text), IsOk());
  ASSERT_THAT(MarkSqliteFormat(path, newest + 1), IsOk());
  const std::string before = FileBytes(path);
  const ProgramResult result = MustNotStart(binary, {"--db=" + path});
  EXPECT_THAT(result.stderr_text, HasSubstr(Refusal(program, path, newest + 1, newest)));
  EXPECT_TRUE(FileBytes(path) == before) << "the refused start wrote to the file";
}

TEST(ServerStartUpgradeTest, TheLockServiceRefusesANewerSqliteFile) {
  ExpectNewerSqliteFileRefused(FENCEGATE_LOCKSERVICE_BIN, "fencegate-lockservice",
                               "lockservice-sqlite-0.1.0.sql",
                               lockservice::SqliteLockStore::kStateFormat);
}

TEST(ServerStartUpgradeTest, TheGatewayRefusesANewerSqliteFile) {
  ExpectNewerSqliteFileRefused(FENCEGATE_GATEWAY_BIN, "fencegate-gateway",
                               "gateway-sqlite-0.1.0.sql",
                               gateway::SqliteStorage::kStateFormat);
}

TEST(ServerStartUpgradeTest, TheLockServiceOnEtcdRefusesANewerFormatBeforeItCampaigns) {
  absl::StatusOr<EtcdCluster*> cluster = SharedEtcdCluster();
  ASSERT_THAT(cluster, IsOk());
  const std::string prefix = absl::StrCat("/server-start-test-", getpid(), "/");
  const int64_t newer = lockservice::EtcdLockStore::kStateFormat + 1;
  etcdserverpb::TxnRequest txn;
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(lockservice::EtcdFormatKey(prefix));
  put->set_value(absl::StrCat(newer));
  absl::StatusOr<etcdserverpb::TxnResponse> written =
      (*cluster)->client().Txn(txn, absl::Now() + absl::Seconds(30));
  ASSERT_THAT(written, IsOk());

  const ProgramResult result =
      MustNotStart(FENCEGATE_LOCKSERVICE_BIN,
                   {"--store=" + (*cluster)->url(), "--etcd_prefix=" + prefix});
  EXPECT_THAT(result.stderr_text,
              HasSubstr(Refusal("fencegate-lockservice", "etcd prefix " + prefix, newer,
                                lockservice::EtcdLockStore::kStateFormat)));
  // It never campaigned: no leader key, nothing written after the marker.
  etcdserverpb::RangeRequest range;
  range.set_key(prefix);
  range.set_range_end(etcd::PrefixRangeEnd(prefix));
  absl::StatusOr<etcdserverpb::RangeResponse> keys =
      (*cluster)->client().Range(range, absl::Now() + absl::Seconds(30));
  ASSERT_THAT(keys, IsOk());
  ASSERT_EQ(keys->kvs_size(), 1);
  EXPECT_EQ(keys->kvs(0).key(), lockservice::EtcdFormatKey(prefix));
  EXPECT_EQ(keys->kvs(0).mod_revision(), written->header().revision());
}

}  // namespace
}  // namespace fencegate::testing
