// HtmlEscape: text made safe inside HTML or XML (SVG) content and quoted
// attribute values: &, <, >, " and ' as entities. The status pages and the
// demo's sequence diagram escape everything clients named with it.
//
// Thread safety: a pure function.
#ifndef FENCEGATE_COMMON_METRICS_HTML_ESCAPE_H_
#define FENCEGATE_COMMON_METRICS_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace fencegate {

std::string HtmlEscape(absl::string_view text);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_METRICS_HTML_ESCAPE_H_
