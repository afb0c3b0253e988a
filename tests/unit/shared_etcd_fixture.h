// SharedEtcdTest: the fixture of the tests that call etcd themselves
// (etcd_lock_store_test.cc, leader_election_test.cc): the client of the
// single-member cluster this process's tests share (SharedEtcdCluster(),
// store_under_test.h), and key prefixes no other test of this process
// uses on it.
//
// Thread safety: a gtest fixture; UniquePrefix() may be called from any
// thread.
#ifndef FENCEGATE_TESTS_UNIT_SHARED_ETCD_FIXTURE_H_
#define FENCEGATE_TESTS_UNIT_SHARED_ETCD_FIXTURE_H_

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "lockservice/etcd/etcd_client.h"
#include "tests/testing/etcd_cluster.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/store_under_test.h"

namespace fencegate::testing {

class SharedEtcdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<EtcdCluster*> cluster = SharedEtcdCluster();
    ASSERT_THAT(cluster, IsOk());
    client_ = &(*cluster)->client();
  }

  // "/<name>-<pid>-<n>/", with n counting the calls of this process.
  static std::string UniquePrefix(absl::string_view name) {
    static std::atomic<int> next{0};
    return absl::StrCat("/", name, "-", getpid(), "-", next.fetch_add(1), "/");
  }

  etcd::EtcdClient* client_ = nullptr;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_UNIT_SHARED_ETCD_FIXTURE_H_
