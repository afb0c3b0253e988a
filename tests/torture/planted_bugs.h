// The planted bugs of the test builds (common/test_hooks/test_hooks.h), what
// each one breaks, which invariants of the checker must catch it, and the
// schedules whose faults expose it. The torture suite runs each and fails if
// the checker does not flag one of those invariants (docs/torture.md).
//
// Thread safety: constant data.
#ifndef FENCEGATE_TESTS_TORTURE_PLANTED_BUGS_H_
#define FENCEGATE_TESTS_TORTURE_PLANTED_BUGS_H_

#include <string>
#include <vector>

#include "tests/torture/schedule.h"

namespace fencegate::torture {

struct PlantedBugCase {
  std::string name;  // the --planted_bug value
  std::string what;
  std::vector<std::string> caught_by;  // any one of these must be flagged
  ScheduleProfile profile;             // planted_bug set
  // The PostgreSQL backend carries the bug too, so it can run on a topology
  // with GatewayStorage::kPostgres; otherwise only the SQLite one does.
  bool in_postgres = false;
};

const std::vector<PlantedBugCase>& PlantedBugCases();
// nullptr if `name` is not a planted bug.
const PlantedBugCase* FindPlantedBug(const std::string& name);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_PLANTED_BUGS_H_
