// The lock service's status page (GET / on its metrics listener): the key
// figures (common/metrics/key_figures.h), then the resources it tracks, the
// most waited-on first: holder, token, time left, waiters, holds. Query
// parameters: prefix=<text> lists only resources whose name starts with
// it; limit=<n> (1 to 1000, default 50) how many. Names chosen by clients
// are escaped (common/metrics/status_page.h).
//
// Thread safety: thread-safe (LockManager::TopResources takes its mutex).
#ifndef FENCEGATE_LOCKSERVICE_SERVER_LOCK_STATUS_PAGE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_LOCK_STATUS_PAGE_H_

#include <string>

#include "common/http/http_listener.h"
#include "common/metrics/registry.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::lockservice {

inline constexpr size_t kStatusPageDefaultLimit = 50;
inline constexpr size_t kStatusPageMaxLimit = 1000;

// `manager` null: this instance serves no lock state itself (a standby);
// `role` says so ("standby: forwards to the leader at ...").
// `hide_resources` (a policy is on, --policy): no resource is listed, as
// the page cannot tell whether its reader may describe them
// (docs/security.md, "Authorization"); the key figures stay.
HttpResponse RenderLockStatusPage(const HttpRequest& request,
                                  const metrics::Registry& registry, LockManager* manager,
                                  const std::string& role, bool hide_resources = false);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_LOCK_STATUS_PAGE_H_
