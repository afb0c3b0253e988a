// The gateway's status page (GET / on its metrics listener): the key
// figures (common/metrics/key_figures.h), the grant-time feed's state, and
// the most recent stale refusals (stale_refusals.h): resource, RPC,
// refused token, the fence it met, when. Names chosen by clients are
// escaped (common/metrics/status_page.h).
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_GATEWAY_GATEWAY_STATUS_PAGE_H_
#define FENCEGATE_GATEWAY_GATEWAY_STATUS_PAGE_H_

#include <string>

#include "common/http/http_listener.h"
#include "common/metrics/registry.h"
#include "gateway/fence_follower.h"
#include "gateway/stale_refusals.h"

namespace fencegate::gateway {

// `follower` null: grant-time fencing is off. `lockservice`: the address
// it follows. `storage`: the storage description. `hide_resources` (a
// policy is on, --policy): the refusals are not listed, as the page cannot
// tell whether its reader may see their resources (docs/security.md,
// "Authorization").
HttpResponse RenderGatewayStatusPage(const HttpRequest& request,
                                     const metrics::Registry& registry,
                                     StaleRefusals& refusals, FenceFollower* follower,
                                     const std::string& lockservice,
                                     const std::string& storage,
                                     bool hide_resources = false);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_STATUS_PAGE_H_
