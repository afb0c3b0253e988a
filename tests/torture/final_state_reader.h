// ReadFinalState: what the gateway holds for each resource once a torture
// run is over (history.h, FinalState): its fence (Describe), the counter,
// and every log/<id> key with its value (List, then plain reads). Plain
// reads see committed state only, so this is exactly what survived.
//
// Thread safety: a free function; blocks until done or `timeout` passes
// (the gateway may just have restarted: UNAVAILABLE is retried).
#ifndef FENCEGATE_TESTS_TORTURE_FINAL_STATE_READER_H_
#define FENCEGATE_TESTS_TORTURE_FINAL_STATE_READER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/torture/history.h"

namespace fencegate::torture {

absl::StatusOr<std::map<std::string, FinalState>> ReadFinalState(
    const std::string& gateway, const std::vector<std::string>& resources,
    absl::Duration timeout = absl::Seconds(60));

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_FINAL_STATE_READER_H_
