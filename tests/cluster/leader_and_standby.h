// LeaderAndStandbyTest: the fixture of the cluster tests that run two
// lock-service instances on one etcd (lockservice_cluster.h) and need to
// know which one leads: StartCluster() waits until one leads and the other
// serves as its standby. On failure, every instance's log is printed.
//
// Thread safety: the test's main thread only.
#ifndef FENCEGATE_TESTS_CLUSTER_LEADER_AND_STANDBY_H_
#define FENCEGATE_TESTS_CLUSTER_LEADER_AND_STANDBY_H_

#include <iostream>
#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "tests/cluster/cluster_client.h"
#include "tests/cluster/lockservice_cluster.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {

class LeaderAndStandbyTest : public ::testing::Test {
 protected:
  void StartCluster(LockServiceClusterOptions options = LockServiceClusterOptions()) {
    auto cluster = LockServiceCluster::Start(dir_.path(), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto leader = cluster_->WaitLeader();
    ASSERT_TRUE(leader.ok()) << leader.status();
    leader_ = *leader;
    standby_ = 1 - leader_;
    ASSERT_THAT(cluster_->WaitServing(standby_), IsOk()) << cluster_->LogTails();
  }

  void TearDown() override {
    if (HasFailure() && cluster_ != nullptr) std::cerr << cluster_->LogTails();
  }

  InstanceStub Stub(int i) { return InstanceStub(cluster_->instance(i).address()); }

  TempDir dir_;
  std::unique_ptr<LockServiceCluster> cluster_;
  int leader_ = -1;
  int standby_ = -1;
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_CLUSTER_LEADER_AND_STANDBY_H_
