// Schedules: a seed reproduces its schedule exactly (what a replay relies
// on), and a profile's promise is what the schedule holds.
#include "tests/torture/schedule.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fencegate::torture {
namespace {

std::vector<std::string> Describe(const Schedule& schedule) {
  std::vector<std::string> lines;
  for (const Fault& fault : schedule.faults) lines.push_back(DescribeFault(fault));
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

TEST(ScheduleTest, PlantedBugProfilesRunPlainFencing) {
  for (const char* name : {"races", "lock-crashes", "lock-restarts", "gateway-restart"}) {
    absl::StatusOr<ScheduleProfile> profile = ProfileNamed(name);
    ASSERT_TRUE(profile.ok()) << name;
    EXPECT_FALSE(MakeSchedule(*profile, 7).secure) << name;
  }
  EXPECT_EQ(ProfileNamed("nope").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fencegate::torture
