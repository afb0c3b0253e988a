// The private state of LockManager (lock_manager.h) and what the files
// that implement it share: lock_manager.cc (the calls and the lifecycle),
// lock_manager_renew_release.cc, lock_manager_leases.cc,
// lock_manager_queues.cc, lock_manager_multi.cc,
// lock_manager_commit.cc and lock_manager_seams.cc, and the torture suite's
// stand-in for the last (tests/torture/planted_lock_bugs.cc). Include it
// only there.
//
// Thread safety: everything here is guarded by LockManager::mu_ (the
// member functions say so in lock_manager.h).
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_INTERNAL_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fencegate/clock.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/compact_time.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lease_listeners.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_store.h"
#include "lockservice/core/resource_state.h"
#include "lockservice/core/wait_queue.h"

namespace fencegate::lockservice {

inline absl::Status ShuttingDownError() {
  return absl::UnavailableError(
      "lock service is shutting down; retry against another instance or "
      "after it restarts");
}

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_MANAGER_INTERNAL_H_
