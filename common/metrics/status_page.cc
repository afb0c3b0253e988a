#include "common/metrics/status_page.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fencegate {
namespace {

// Narrow screens: tables turn into cards, each cell a line with its
// column's name before it (td::before, from data-label).
constexpr char kStyle[] = R"css(
*{box-sizing:border-box}
body{margin:0;padding:12px;font:15px/1.4 system-ui,sans-serif;color:#1b1f24;background:#f6f7f9;
  overflow-wrap:anywhere}
header,section,footer{max-width:1100px;margin:0 auto 16px}
h1{font-size:1.3em;margin:0}h2{font-size:1.1em;margin:0 0 8px}
.sub{color:#57606a;margin:2px 0 0}
section{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:12px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:4px 24px;margin:0}
dt{color:#57606a}dd{margin:0;font-weight:600}
table{width:100%;border-collapse:collapse;table-layout:auto}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{color:#57606a;font-weight:600;white-space:nowrap}
td.n{white-space:nowrap}
code{font-family:ui-monospace,monospace;word-break:break-all}
form{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 8px}
input{font:inherit;padding:4px;min-width:0;flex:1 1 10em}
button{font:inherit;padding:4px 12px}
.empty{color:#57606a}
@media (max-width:600px){
  dl{grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:4px 12px}
  table,thead,tbody,tr,th,td{display:block}
  thead{display:none}
  tr{border-bottom:1px solid #d0d7de;padding:6px 0}
  td{border:0;padding:1px 0}
  td::before{content:attr(data-label) ": ";color:#57606a;font-weight:400}
}
)css";

}  // namespace

StatusPage::StatusPage(absl::string_view title, absl::string_view subtitle) {
  absl::StrAppend(
      &html_,
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>",
      HtmlEscape(title), " status</title><style>", kStyle,
      "</style></head>\n<body>\n<header><h1>", HtmlEscape(title),
      "</h1><p class=\"sub\">", HtmlEscape(subtitle), "</p></header>\n");
}

void StatusPage::Heading(absl::string_view id, absl::string_view text) {
  if (in_section_) html_ += "</section>\n";
  in_section_ = true;
  absl::StrAppend(&html_, "<section id=\"", HtmlEscape(id), "\"><h2>", HtmlEscape(text),
                  "</h2>\n");
}

void StatusPage::Paragraph(absl::string_view text) {
  absl::StrAppend(&html_, "<p>", HtmlEscape(text), "</p>\n");
}

void StatusPage::Figures(const std::vector<metrics::Figure>& figures) {
  html_ += "<dl>";
  for (const metrics::Figure& f : figures) {
    absl::StrAppend(&html_, "<dt>", HtmlEscape(f.label), "</dt><dd id=\"figure-",
                    HtmlEscape(f.key), "\">", HtmlEscape(f.text), "</dd>");
  }
  html_ += "</dl>\n";
}

void StatusPage::FilterForm(absl::string_view name, absl::string_view label,
                            absl::string_view value) {
  absl::StrAppend(&html_, "<form method=\"get\" action=\"/\"><label for=\"",
                  HtmlEscape(name), "\">", HtmlEscape(label), "</label><input id=\"",
                  HtmlEscape(name), "\" name=\"", HtmlEscape(name), "\" value=\"",
                  HtmlEscape(value),
                  "\"><button type=\"submit\">Filter</button></form>\n");
}

void StatusPage::Table(absl::string_view id, const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& rows,
                       absl::string_view empty, const std::vector<int>& short_columns) {
  if (rows.empty()) {
    absl::StrAppend(&html_, "<p class=\"empty\" id=\"", HtmlEscape(id), "\">",
                    HtmlEscape(empty), "</p>\n");
    return;
  }
  absl::StrAppend(&html_, "<table id=\"", HtmlEscape(id), "\"><thead><tr>");
  for (const std::string& h : headers)
    absl::StrAppend(&html_, "<th>", HtmlEscape(h), "</th>");
  html_ += "</tr></thead><tbody>\n";
  for (const std::vector<std::string>& row : rows) {
    html_ += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string label = i < headers.size() ? HtmlEscape(headers[i]) : "";
      const bool short_value = std::find(short_columns.begin(), short_columns.end(),
                                         static_cast<int>(i)) != short_columns.end();
      absl::StrAppend(&html_, "<td", short_value ? " class=\"n\"" : "", " data-label=\"",
                      label, "\">", HtmlEscape(row[i]), "</td>");
    }
    html_ += "</tr>\n";
  }
  html_ += "</tbody></table>\n";
}

std::string StatusPage::Finish() {
  if (in_section_) html_ += "</section>\n";
  html_ +=
      "<footer><p class=\"sub\">Metrics for Prometheus: <a "
      "href=\"/metrics\">/metrics</a>. "
      "What each figure means: docs/observability.md.</p></footer>\n</body></html>\n";
  return std::move(html_);
}

}  // namespace fencegate
