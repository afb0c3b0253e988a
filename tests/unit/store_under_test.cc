#include "tests/unit/store_under_test.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "harness/temp_dir.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "lockservice/etcd/etcd_lock_store.h"

namespace fencegate::testing {
namespace {

using lockservice::LockStore;

// Owns the shared cluster; gtest tears it down after the last test, before
// the process exits (gRPC must not be torn down by static destructors).
class SharedEtcdEnvironment final : public ::testing::Environment {
 public:
  absl::StatusOr<EtcdCluster*> Get() {
    if (cluster_ == nullptr && start_error_.ok()) {
      dir_ = std::make_unique<TempDir>();
      absl::StatusOr<std::unique_ptr<EtcdCluster>> cluster = EtcdCluster::Start(dir_->path());
      if (cluster.ok()) {
        cluster_ = *std::move(cluster);
      } else {
        start_error_ = cluster.status();
      }
    }
    if (!start_error_.ok()) return start_error_;
    return cluster_.get();
  }
  void TearDown() override {
    cluster_.reset();
    dir_.reset();
  }

 private:
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<EtcdCluster> cluster_;
  absl::Status start_error_;
};

SharedEtcdEnvironment* const shared_etcd = static_cast<SharedEtcdEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new SharedEtcdEnvironment()));

class SqliteStoreUnderTest final : public StoreUnderTest {
 public:
  explicit SqliteStoreUnderTest(std::string path) : path_(std::move(path)) {}
  absl::StatusOr<std::unique_ptr<LockStore>> Open() override {
    absl::StatusOr<std::unique_ptr<lockservice::SqliteLockStore>> store =
        lockservice::SqliteLockStore::Open(path_);
    if (!store.ok()) return store.status();
    return std::unique_ptr<LockStore>(*std::move(store));
  }

 private:
  const std::string path_;
};

class EtcdStoreUnderTest final : public StoreUnderTest {
 public:
  explicit EtcdStoreUnderTest(EtcdCluster* cluster) : cluster_(cluster) {
    static std::atomic<int> next{0};
    prefix_ = absl::StrCat("/test-", getpid(), "-", next.fetch_add(1), "/");
  }
  ~EtcdStoreUnderTest() override { EndTerm(); }

  absl::StatusOr<std::unique_ptr<LockStore>> Open() override {
    EndTerm();
    etcd::EtcdClient& client = cluster_->client();
    absl::StatusOr<lockservice::LeaderGuard> guard =
        TakeLeadership(client, lockservice::EtcdLeaderKey(prefix_), absl::Seconds(600));
    if (!guard.ok()) return guard.status();
    lease_ = guard->lease_id;
    lockservice::EtcdLockStoreOptions options;
    options.prefix = prefix_;
    options.load_page = 3;  // several pages even for small tests
    return std::unique_ptr<LockStore>(
        new lockservice::EtcdLockStore(&client, options, *guard, nullptr));
  }

 private:
  void EndTerm() {
    if (lease_ == 0) return;
    cluster_->client().LeaseRevoke(lease_, absl::Now() + absl::Seconds(30)).IgnoreError();
    lease_ = 0;
  }

  EtcdCluster* const cluster_;
  std::string prefix_;
  int64_t lease_ = 0;
};

// Reports a cluster that did not start through every Open().
class BrokenStoreUnderTest final : public StoreUnderTest {
 public:
  explicit BrokenStoreUnderTest(absl::Status why) : why_(std::move(why)) {}
  absl::StatusOr<std::unique_ptr<LockStore>> Open() override { return why_; }

 private:
  const absl::Status why_;
};

}  // namespace

std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param == StoreKind::kSqlite ? "Sqlite" : "Etcd";
}

absl::StatusOr<EtcdCluster*> SharedEtcdCluster() { return shared_etcd->Get(); }

absl::StatusOr<lockservice::LeaderGuard> TakeLeadership(etcd::EtcdClient& client,
                                                        const std::string& key,
                                                        absl::Duration ttl) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> lease = client.LeaseGrant(ttl, deadline);
  if (!lease.ok()) return lease.status();
  lockservice::LeaderGuard guard;
  guard.key = key;
  guard.lease_id = lease->id();
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* absent = txn.add_compare();
  absent->set_key(key);
  absent->set_target(etcdserverpb::Compare::CREATE);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value("test");
  put->set_lease(guard.lease_id);
  absl::StatusOr<etcdserverpb::TxnResponse> created = client.Txn(txn, deadline);
  if (!created.ok()) return created.status();
  if (!created->succeeded()) {
    client.LeaseRevoke(guard.lease_id, deadline).IgnoreError();
    return absl::FailedPreconditionError(absl::StrCat(key, " exists: another term leads"));
  }
  guard.create_revision = created->header().revision();
  return guard;
}

std::unique_ptr<StoreUnderTest> StoreUnderTest::Make(StoreKind kind,
                                                     const std::string& dir) {
  if (kind == StoreKind::kSqlite) {
    return std::make_unique<SqliteStoreUnderTest>(dir + "/locks.db");
  }
  absl::StatusOr<EtcdCluster*> cluster = SharedEtcdCluster();
  if (!cluster.ok()) return std::make_unique<BrokenStoreUnderTest>(cluster.status());
  return std::make_unique<EtcdStoreUnderTest>(*cluster);
}

}  // namespace fencegate::testing
