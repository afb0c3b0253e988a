#include "gateway/gateway_status_page.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "common/metrics/key_figures.h"
#include "common/metrics/status_page.h"

namespace fencegate::gateway {

HttpResponse RenderGatewayStatusPage(const HttpRequest& request,
                                     const metrics::Registry& registry,
                                     StaleRefusals& refusals, FenceFollower* follower,
                                     const std::string& lockservice,
                                     const std::string& storage, bool hide_resources) {
  const absl::Time now = absl::Now();
  StatusPage page(
      ProgramName(),
      absl::StrCat(VersionLine(), " · storage ", storage, " · ",
                   absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", now, absl::UTCTimeZone())));
  page.Heading("figures", "Key figures");
  absl::StatusOr<std::vector<metrics::Sample>> samples =
      metrics::ParseExposition(registry.Render());
  if (samples.ok()) {
    page.Figures(metrics::KeyFigures(*samples, now));
  } else {
    page.Paragraph(std::string(samples.status().message()));
  }

  page.Heading("feed", "Grant-time fencing feed");
  if (follower == nullptr) {
    page.Paragraph(
        "Off: this gateway follows no lock service (--lockservice is empty). Fences rise "
        "when a new holder writes, reads with its token or calls Fence.");
  } else {
    const FenceFollower::Stats s = follower->stats();
    page.Table(
        "feed-state",
        {"Lock service", "State", "Applied position", "Head position", "Behind",
         "Since last event", "Reconnects"},
        {{lockservice, s.caught_up ? "live (caught up)" : "catching up or disconnected",
          absl::StrCat(s.applied_position), absl::StrCat(s.head_position),
          absl::StrCat(s.head_position - s.applied_position),
          absl::StrFormat("%.1f s", absl::ToDoubleSeconds(s.since_last_event)),
          absl::StrCat(s.streams_ended)}},
        "");
  }

  page.Heading("refusals", "Recent stale refusals, newest first");
  if (hide_resources) {
    page.Paragraph(kResourcesHiddenByPolicy);
    HttpResponse response;
    response.content_type = "text/html; charset=utf-8";
    response.body = page.Finish();
    return response;
  }
  std::vector<std::vector<std::string>> rows;
  for (const StaleRefusals::Refusal& r : refusals.Recent()) {
    rows.push_back(
        {r.resource, std::string(RpcName(r.rpc)), absl::StrCat(r.token),
         absl::StrCat(r.fence),
         absl::FormatTime("%Y-%m-%d %H:%M:%E3S UTC", r.when, absl::UTCTimeZone())});
  }
  page.Table("stale", {"Resource", "RPC", "Refused token", "Fence then", "When"}, rows,
             "No stale request refused since this gateway started.",
             /*short_columns=*/{1, 2, 3});
  HttpResponse response;
  response.content_type = "text/html; charset=utf-8";
  response.body = page.Finish();
  return response;
}

}  // namespace fencegate::gateway
