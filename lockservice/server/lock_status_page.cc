#include "lockservice/server/lock_status_page.h"

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "common/metrics/key_figures.h"
#include "common/metrics/status_page.h"

namespace fencegate::lockservice {
namespace {

std::string Left(absl::Duration d) {
  return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(d));
}

}  // namespace

HttpResponse RenderLockStatusPage(const HttpRequest& request,
                                  const metrics::Registry& registry, LockManager* manager,
                                  const std::string& role, bool hide_resources) {
  const std::string prefix = request.Query("prefix");
  size_t limit = kStatusPageDefaultLimit;
  const std::string limit_text = request.Query("limit");
  HttpResponse response;
  if (!limit_text.empty() && (!absl::SimpleAtoi(limit_text, &limit) || limit < 1 ||
                              limit > kStatusPageMaxLimit)) {
    response.status = 400;
    response.body =
        absl::StrCat("limit must be a number from 1 to ", kStatusPageMaxLimit, "\n");
    return response;
  }
  const absl::Time now = absl::Now();
  absl::StatusOr<std::vector<metrics::Sample>> samples =
      metrics::ParseExposition(registry.Render());
  StatusPage page(
      ProgramName(),
      absl::StrCat(VersionLine(), " · ", role, " · ",
                   absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", now, absl::UTCTimeZone())));
  page.Heading("figures", "Key figures");
  if (samples.ok()) {
    page.Figures(metrics::KeyFigures(*samples, now));
  } else {
    page.Paragraph(std::string(samples.status().message()));
  }
  page.Heading("resources", "Resources, most waited-on first");
  if (!hide_resources) page.FilterForm("prefix", "Name starts with", prefix);
  if (hide_resources) {
    page.Paragraph(kResourcesHiddenByPolicy);
  } else if (manager == nullptr) {
    page.Paragraph(absl::StrCat("This instance holds no lock state: ", role, "."));
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const ResourceSummary& r : manager->TopResources(prefix, limit)) {
      const ResourceInfo& i = r.info;
      rows.push_back(
          {r.resource, i.held ? i.holder : "(free)", i.held ? absl::StrCat(i.token) : "",
           i.held ? Left(i.remaining)
                  : (i.lock_delay_remaining > absl::ZeroDuration()
                         ? absl::StrCat("lock-delay ", Left(i.lock_delay_remaining))
                         : ""),
           absl::StrCat(i.waiters), i.held ? absl::StrCat(i.hold_count) : ""});
    }
    page.Paragraph(absl::StrCat(
        "Up to ", limit, " resources",
        prefix.empty() ? "" : absl::StrCat(" starting with \"", prefix, "\""),
        "; time left is the lease's remaining TTL."));
    page.Table("held", {"Resource", "Holder", "Token", "Time left", "Waiters", "Holds"},
               rows,
               prefix.empty() ? "No resource is held or waited on."
                              : "No resource with that prefix is held or waited on.",
               /*short_columns=*/{2, 3, 4, 5});
  }
  response.content_type = "text/html; charset=utf-8";
  response.body = page.Finish();
  return response;
}

}  // namespace fencegate::lockservice
