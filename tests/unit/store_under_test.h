// StoreUnderTest: the LockStore implementations that the shared semantic
// suites run against (TEST_P over StoreKind), so the lock service behaves
// the same on both:
//   kSqlite  a file in the test's temp dir;
//   kEtcd    a single-member etcd cluster started by this test process
//            (one for all its tests, each test under its own key prefix),
//            this process being the leader of one term.
//
// Open() returns a store over the same durable state as every store opened
// before by this object: a restart. With etcd each Open() is a new term of
// a new leader: the previous term's etcd lease is revoked, as if it had
// expired, and the leader key created again.
//
// Thread safety: one thread (the test's).
#ifndef FENCEGATE_TESTS_UNIT_STORE_UNDER_TEST_H_
#define FENCEGATE_TESTS_UNIT_STORE_UNDER_TEST_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/leader_election.h"
#include "tests/testing/etcd_cluster.h"

namespace fencegate::testing {

enum class StoreKind { kSqlite, kEtcd };

// "Sqlite" / "Etcd", for test names.
std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info);

// The single-member cluster this process's tests share, started on first
// use and stopped after the last test.
absl::StatusOr<EtcdCluster*> SharedEtcdCluster();

// Becomes the leader of a term the way LeaderElection does: grants an etcd
// lease of `ttl` and creates `key` attached to it. FAILED_PRECONDITION if
// the key exists (another term leads).
absl::StatusOr<lockservice::LeaderGuard> TakeLeadership(etcd::EtcdClient& client,
                                                        const std::string& key,
                                                        absl::Duration ttl);

class StoreUnderTest {
 public:
  // Files of the SQLite store go to `dir`.
  static std::unique_ptr<StoreUnderTest> Make(StoreKind kind, const std::string& dir);
  virtual ~StoreUnderTest() = default;

  // REQUIRES: the store the previous Open() returned is destroyed.
  virtual absl::StatusOr<std::unique_ptr<lockservice::LockStore>> Open() = 0;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_UNIT_STORE_UNDER_TEST_H_
