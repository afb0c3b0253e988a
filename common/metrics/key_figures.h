// The key figures of a fencegate server, computed from its metrics (the
// exposition text): the status page's "Key figures" and `fencegate status`
// print the same list, made here once. docs/observability.md says what
// each figure means.
//
//   absl::StatusOr<std::vector<Sample>> samples = ParseExposition(text);
//   for (const Figure& f : KeyFigures(*samples, now)) ...
//
// ParseExposition reads what Registry::Render() writes (the text format,
// exposition.h): sample lines with optional labels; HELP, TYPE and other
// comments are skipped; timestamps are not expected.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_COMMON_METRICS_KEY_FIGURES_H_
#define FENCEGATE_COMMON_METRICS_KEY_FIGURES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate::metrics {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// INVALID_ARGUMENT naming the line that does not parse.
absl::StatusOr<std::vector<Sample>> ParseExposition(absl::string_view text);

// The sum of the samples named `name` whose labels include all of
// `match`; nullopt if there is none.
std::optional<double> SumOf(const std::vector<Sample>& samples, absl::string_view name,
                            const std::map<std::string, std::string>& match = {});

struct Figure {
  std::string key;               // for JSON: "stale_writes_refused"
  std::string label;             // for people: "Stale writes refused"
  std::optional<double> number;  // set for numbers (JSON prints it as one)
  std::string text;              // the value as shown: "12", "2.5 ms", "leader"
};

// The figures for the server the samples come from (lock service or
// gateway, by fencegate_build_info's program). `now` is the wall time, for
// the uptime.
std::vector<Figure> KeyFigures(const std::vector<Sample>& samples, absl::Time now);

// The figures as one JSON object {"key": number or "text", ...}.
std::string FiguresJson(const std::vector<Figure>& figures);

}  // namespace fencegate::metrics

#endif  // FENCEGATE_COMMON_METRICS_KEY_FIGURES_H_
