// StatusPage: the server-rendered HTML page each fencegate server shows at
// / on its metrics listener (docs/observability.md, "The status page").
// One self-contained document: inline CSS, no script, nothing fetched from
// elsewhere. It reads on a phone: below 600 px wide every table row becomes
// a card of "label: value" lines, and long names wrap, so a 390 px screen
// never scrolls sideways.
//
// Everything passed in is text: the page escapes it for HTML (resource and
// holder names are chosen by clients and may hold anything).
//
// Thread safety: one thread per page.
#ifndef FENCEGATE_COMMON_METRICS_STATUS_PAGE_H_
#define FENCEGATE_COMMON_METRICS_STATUS_PAGE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/metrics/html_escape.h"
#include "common/metrics/key_figures.h"

namespace fencegate {

// What both servers' pages say instead of resource names when a policy
// (--policy) is on: an HTTP request carries no identity the policy could
// judge (docs/security.md, "Authorization").
inline constexpr char kResourcesHiddenByPolicy[] =
    "Resources are not listed: this server checks calls against a policy "
    "(--policy), and this page cannot tell whether you may describe them. "
    "Describe them over gRPC with a certificate the policy grants describe.";

class StatusPage {
 public:
  // `title`: the server ("fencegate-lockservice"); `subtitle`: one line
  // under it (version, uptime).
  StatusPage(absl::string_view title, absl::string_view subtitle);

  // Starts a section (ending the one before) with a heading; `id` names
  // it for links and tests.
  void Heading(absl::string_view id, absl::string_view text);
  void Paragraph(absl::string_view text);
  // Label/value pairs.
  void Figures(const std::vector<metrics::Figure>& figures);
  // A GET form with one text field `name` (its current value `value`).
  void FilterForm(absl::string_view name, absl::string_view label,
                  absl::string_view value);
  // A table; `id` names it for tests and links. Each row has one cell per
  // header. An empty table shows `empty` instead. The `short_columns`
  // (numbers, times) never wrap; the others wrap anywhere, as names must.
  void Table(absl::string_view id, const std::vector<std::string>& headers,
             const std::vector<std::vector<std::string>>& rows, absl::string_view empty,
             const std::vector<int>& short_columns = {});

  // The whole document.
  std::string Finish();

 private:
  std::string html_;
  bool in_section_ = false;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_METRICS_STATUS_PAGE_H_
