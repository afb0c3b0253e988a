// Schedules: a seed reproduces its schedule exactly (what a replay relies
// on), and a profile's promise is what the schedule holds, per gateway too.
#include "tests/torture/schedule.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fencegate::torture {
namespace {

std::vector<std::string> Describe(const Schedule& schedule) {
  std::vector<std::string> lines;
  for (const Fault& fault : schedule.faults) lines.push_back(DescribeFault(schedule, fault));
  return lines;
}

int Count(const Schedule& schedule, FaultKind kind) {
  int n = 0;
  for (const Fault& fault : schedule.faults) n += fault.kind == kind ? 1 : 0;
  return n;
}

TEST(ScheduleTest, SameSeedSameSchedule) {
  const ScheduleProfile profile = *ProfileNamed("default");
  EXPECT_EQ(Describe(MakeSchedule(profile, 4711)), Describe(MakeSchedule(profile, 4711)));
  EXPECT_NE(Describe(MakeSchedule(profile, 4711)), Describe(MakeSchedule(profile, 4712)));
}

TEST(ScheduleTest, HoldsWhatTheProfilePromises) {
  const ScheduleProfile profile = *ProfileNamed("default");
  const Schedule schedule = MakeSchedule(profile, 3);
  EXPECT_EQ(Count(schedule, FaultKind::kPauseHolder), profile.holder_pauses);
  EXPECT_EQ(Count(schedule, FaultKind::kPauseBeforeWrite), profile.pauses_before_write);
  EXPECT_EQ(Count(schedule, FaultKind::kStaleWriterRace), profile.stale_writer_races);
  EXPECT_EQ(Count(schedule, FaultKind::kKillRestart),
            profile.lockservice.kill_restarts + profile.gateway.kill_restarts);
  EXPECT_EQ(Count(schedule, FaultKind::kFailpointCrash),
            profile.lockservice.failpoint_crashes + profile.gateway.failpoint_crashes);
  EXPECT_EQ(PromisedFaults(schedule), static_cast<int>(schedule.faults.size()));
  for (size_t i = 1; i < schedule.faults.size(); ++i) {
    EXPECT_LE(schedule.faults[i - 1].at, schedule.faults[i].at);
  }
  for (const Fault& fault : schedule.faults) {
    EXPECT_GE(fault.at, absl::Seconds(1));
    EXPECT_LE(fault.at, profile.traffic - absl::Seconds(2));
    if (fault.kind == FaultKind::kPauseHolder || fault.kind == FaultKind::kPauseBeforeWrite) {
      EXPECT_GE(fault.ttl_factor, 0.2);
      EXPECT_LE(fault.ttl_factor, 5.0);
    }
  }
}

TEST(ScheduleTest, PausesSpreadOverTheWorkers) {
  const ScheduleProfile profile = *ProfileNamed("default");  // 6 pauses, 6 workers
  std::set<int> paused;
  for (const Fault& fault : MakeSchedule(profile, 11).faults) {
    if (fault.target == Target::kWorker) paused.insert(fault.worker);
  }
  EXPECT_EQ(paused.size(), 6u);
}

TEST(ScheduleTest, OddSeedsRunSecureAndOnlyPlainRacesReleaseByOperator) {
  ScheduleProfile profile = *ProfileNamed("default");
  profile.release_by_operator = 1;
  const Schedule odd = MakeSchedule(profile, 5);
  const Schedule even = MakeSchedule(profile, 6);
  EXPECT_TRUE(odd.secure);
  EXPECT_FALSE(even.secure);
  for (const Fault& fault : odd.faults) EXPECT_FALSE(fault.release_by_operator);
  for (const Fault& fault : even.faults) {
    EXPECT_EQ(fault.release_by_operator, fault.kind == FaultKind::kStaleWriterRace);
  }
}

TEST(ScheduleTest, TwoGatewaysGetTheirFaultsAndRacesOfTheirOwnWorkers) {
  const ScheduleProfile profile = *ProfileNamed("postgres-two-gateways");
  ASSERT_EQ(profile.topology.gateways, 2);
  ASSERT_EQ(profile.topology.storage, GatewayStorage::kPostgres);
  for (uint64_t seed : {1, 2, 3, 4}) {
    const Schedule schedule = MakeSchedule(profile, seed);
    std::map<std::pair<int, FaultKind>, int> per_gateway;
    std::set<int> raced;
    for (const Fault& fault : schedule.faults) {
      if (fault.target == Target::kLockService) {
        EXPECT_EQ(fault.kind, FaultKind::kKillRestart) << DescribeFault(schedule, fault);
      }
      if (fault.target != Target::kGateway) continue;
      ASSERT_GE(fault.gateway, 0);
      ASSERT_LT(fault.gateway, 2);
      ++per_gateway[{fault.gateway, fault.kind}];
      if (fault.kind == FaultKind::kStaleWriterRace) {
        raced.insert(fault.gateway);
        // The stale writer must send its write to the stalled gateway.
        EXPECT_EQ(fault.worker % 2, fault.gateway) << DescribeFault(schedule, fault);
        EXPECT_LT(fault.worker, profile.workers);
      }
    }
    EXPECT_EQ(raced, (std::set<int>{0, 1})) << "seed " << seed;
    for (int gateway : {0, 1}) {
      EXPECT_EQ((per_gateway[{gateway, FaultKind::kKillRestart}]), 1);
      EXPECT_EQ((per_gateway[{gateway, FaultKind::kStopServer}]), 1);
      EXPECT_EQ((per_gateway[{gateway, FaultKind::kFailpointCrash}]), 1);
      EXPECT_EQ((per_gateway[{gateway, FaultKind::kClockJump}]), 0);
    }
    EXPECT_EQ(Count(schedule, FaultKind::kKillRestart), 3);  // the lock service's too
    EXPECT_EQ(Count(schedule, FaultKind::kPauseHolder),
              profile.holder_pauses + profile.sql_holder_pauses);
    EXPECT_EQ(Count(schedule, FaultKind::kPauseBeforeWrite),
              profile.pauses_before_write + profile.sql_pauses_before_write);
  }
}

TEST(ScheduleTest, SqlWorkersGetPausesOfTheirOwnAndAreNeverStaleWritersOfARace) {
  for (const char* name : {"postgres-two-gateways", "sql-pauses"}) {
    const ScheduleProfile profile = *ProfileNamed(name);
    ASSERT_GT(profile.sql_workers, 0) << name;
    EXPECT_EQ(profile.topology.storage, GatewayStorage::kPostgres) << name;
    for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
      const Schedule schedule = MakeSchedule(profile, seed);
      int sql_holder_pauses = 0, sql_pauses_before_write = 0;
      for (const Fault& fault : schedule.faults) {
        if (fault.target != Target::kWorker && fault.kind != FaultKind::kStaleWriterRace)
          continue;
        ASSERT_LT(fault.worker, profile.workers + profile.sql_workers);
        if (fault.worker < profile.workers) continue;
        EXPECT_NE(fault.kind, FaultKind::kStaleWriterRace)
            << DescribeFault(schedule, fault);
        EXPECT_THAT(DescribeFault(schedule, fault), ::testing::HasSubstr(" sql"));
        sql_holder_pauses += fault.kind == FaultKind::kPauseHolder;
        sql_pauses_before_write += fault.kind == FaultKind::kPauseBeforeWrite;
      }
      EXPECT_EQ(sql_holder_pauses, profile.sql_holder_pauses) << name << " seed " << seed;
      EXPECT_EQ(sql_pauses_before_write, profile.sql_pauses_before_write)
          << name << " seed " << seed;
    }
  }
  EXPECT_EQ(WorkerName(*ProfileNamed("postgres-two-gateways"), 5), "w5");
  EXPECT_EQ(WorkerName(*ProfileNamed("postgres-two-gateways"), 7), "sql1");
}

TEST(ScheduleTest, SqlWorkersLeaveTheOtherFaultsOfASeedAlone) {
  // The SQL workers' pauses are drawn last: without them a seed draws the
  // faults it drew before they existed.
  ScheduleProfile profile = *ProfileNamed("postgres-two-gateways");
  const Schedule with = MakeSchedule(profile, 77);
  profile.sql_workers = 0;
  profile.sql_holder_pauses = 0;
  profile.sql_pauses_before_write = 0;
  const Schedule without = MakeSchedule(profile, 77);
  std::vector<std::string> others;
  for (const Fault& fault : with.faults) {
    if (fault.worker < profile.workers || fault.target != Target::kWorker) {
      others.push_back(DescribeFault(with, fault));
    }
  }
  EXPECT_EQ(others, Describe(without));
}

TEST(ScheduleTest, EtcdClusterGetsEveryFaultOfTheReplicatedTopology) {
  const ScheduleProfile profile = *ProfileNamed("etcd-cluster");
  ASSERT_TRUE(profile.topology.replicated());
  ASSERT_EQ(profile.topology.lockservices, 3);
  ASSERT_EQ(profile.topology.etcd_members, 3);
  for (uint64_t seed : {1, 2, 3}) {
    const Schedule schedule = MakeSchedule(profile, seed);
    std::map<std::pair<FaultKind, Role>, int> lock, etcd;
    std::map<Partition, int> partitions;
    for (const Fault& fault : schedule.faults) {
      if (fault.target == Target::kLockService && fault.kind != FaultKind::kPartition) {
        ++lock[{fault.kind, fault.role}];
      }
      if (fault.target == Target::kEtcd && fault.kind != FaultKind::kPartition) {
        ++etcd[{fault.kind, fault.role}];
      }
      if (fault.kind == FaultKind::kPartition) ++partitions[fault.partition];
      if (fault.partition == Partition::kWorkerFromLockService) {
        EXPECT_EQ(fault.target, Target::kWorker);
        EXPECT_LT(fault.worker, profile.workers);
      }
    }
    // The lock service: its leader and a standby.
    EXPECT_EQ((lock[{FaultKind::kKillRestart, Role::kLeader}]), 1);
    EXPECT_EQ((lock[{FaultKind::kKillRestart, Role::kStandby}]), 1);
    EXPECT_EQ((lock[{FaultKind::kStopServer, Role::kLeader}]), 1);
    EXPECT_EQ((lock[{FaultKind::kStopServer, Role::kStandby}]), 1);
    EXPECT_EQ((lock[{FaultKind::kClockJump, Role::kLeader}]), 1);
    EXPECT_EQ((lock[{FaultKind::kFailpointCrash, Role::kLeader}]), 1);
    EXPECT_EQ((lock[{FaultKind::kPauseLeaderPastTtl, Role::kLeader}]), 1);
    // etcd: its leader and a follower, and the quorum.
    EXPECT_EQ((etcd[{FaultKind::kKillRestart, Role::kLeader}]), 1);
    EXPECT_EQ((etcd[{FaultKind::kKillRestart, Role::kStandby}]), 1);
    EXPECT_EQ((etcd[{FaultKind::kStopServer, Role::kLeader}]), 1);
    EXPECT_EQ((etcd[{FaultKind::kStopServer, Role::kStandby}]), 1);
    EXPECT_EQ((etcd[{FaultKind::kQuorumLoss, Role::kOnly}]), 1);
    // Every partition of the issue, once.
    for (Partition p :
         {Partition::kLeaderFromEtcd, Partition::kIsolateEtcdMember,
          Partition::kEtcdSplitLeaderMinority, Partition::kGatewaysFromLockService,
          Partition::kWorkerFromLockService}) {
      EXPECT_EQ(partitions[p], 1) << static_cast<int>(p);
    }
    // And what postgres-two-gateways has, on both gateways.
    EXPECT_EQ(Count(schedule, FaultKind::kStaleWriterRace), 2);
    EXPECT_EQ(Count(schedule, FaultKind::kPauseHolder), profile.holder_pauses);
    for (const Fault& fault : schedule.faults) {
      EXPECT_FALSE(DescribeFault(schedule, fault).empty());
    }
  }
}

TEST(ScheduleTest, ReplicatedFaultsLeaveTheOtherTopologiesSchedulesAlone) {
  // Roles draw nothing and the replicated faults come last: the same seed
  // draws the same schedule on the other topologies as before they existed.
  ScheduleProfile profile = *ProfileNamed("postgres-two-gateways");
  const Schedule before = MakeSchedule(profile, 77);
  profile.replicated = ReplicatedFaults{0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Describe(MakeSchedule(profile, 77)), Describe(before));
  for (const Fault& fault : before.faults) EXPECT_EQ(fault.role, Role::kOnly);
}

TEST(ScheduleTest, OneGatewayKeepsItsNameAndTwoAreNumbered) {
  EXPECT_EQ(GatewayName(*TopologyNamed("sqlite"), 0), "gateway");
  EXPECT_EQ(GatewayName(*TopologyNamed("postgres-two-gateways"), 1), "gateway-1");
  EXPECT_EQ(TopologyNamed("sqlite-two-gateways").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LockServiceName(*TopologyNamed("sqlite"), 0), "lockservice");
  EXPECT_EQ(LockServiceName(*TopologyNamed("etcd-cluster"), 2), "lockservice-2");
}

TEST(ScheduleTest, KindsProfilesMixEveryKindOfRound) {
  for (const char* name : {"kinds", "kinds-contention", "etcd-kinds"}) {
    const ScheduleProfile profile = *ProfileNamed(name);
    EXPECT_GT(profile.shared_rounds, 0) << name;
    EXPECT_GT(profile.permit_rounds, 0) << name;
    EXPECT_GT(profile.multi_rounds, 0) << name;
    EXPECT_LT(profile.shared_rounds + profile.permit_rounds + profile.multi_rounds, 1)
        << name;
    EXPECT_GE(profile.resources, 2) << name;  // a multi round takes two
    EXPECT_GT(profile.workers, static_cast<int>(profile.permits)) << name;
  }
  const ScheduleProfile kinds = *ProfileNamed("kinds");
  EXPECT_GT(kinds.holder_pauses + kinds.pauses_before_write, 0);
  EXPECT_EQ(ProfileNamed("default")->shared_rounds, 0);  // the writers' profiles stay
}

TEST(ScheduleTest, TheElectionsProfileKillsHoldersAndTheOthersKeepTheirSeeds) {
  const ScheduleProfile elections = *ProfileNamed("elections");
  const Schedule schedule = MakeSchedule(elections, 11);
  EXPECT_EQ(Count(schedule, FaultKind::kKillHolder), elections.holder_kills);
  EXPECT_GT(elections.holder_kills, 0);
  EXPECT_GT(elections.elect_rounds, 0);
  for (const Fault& fault : schedule.faults) {
    if (fault.kind != FaultKind::kKillHolder) continue;
    EXPECT_EQ(fault.target, Target::kWorker);
    EXPECT_GE(fault.worker, 0);
    EXPECT_LT(fault.worker, elections.workers);
  }
  // Kills are drawn last: without them a profile's schedule is what it was.
  ScheduleProfile without = elections;
  without.holder_kills = 0;
  const Schedule before = MakeSchedule(without, 11);
  std::vector<std::string> kept;
  for (const Fault& fault : schedule.faults) {
    if (fault.kind != FaultKind::kKillHolder)
      kept.push_back(DescribeFault(schedule, fault));
  }
  std::vector<std::string> was;
  for (const Fault& fault : before.faults) was.push_back(DescribeFault(before, fault));
  EXPECT_EQ(kept, was);
}

TEST(ScheduleTest, PlantedBugProfilesRunPlainFencing) {
  for (const char* name :
       {"races", "lock-crashes", "lock-restarts", "gateway-restart", "sql-pauses",
        "kinds-contention", "kinds-paused-readers", "elections-paused-leaders",
        "etcd-leader-pauses", "etcd-leader-partitions", "etcd-standbys"}) {
    absl::StatusOr<ScheduleProfile> profile = ProfileNamed(name);
    ASSERT_TRUE(profile.ok()) << name;
    EXPECT_FALSE(MakeSchedule(*profile, 7).secure) << name;
  }
  EXPECT_EQ(ProfileNamed("nope").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fencegate::torture
