#include "common/metrics/exposition.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fencegate::metrics {
namespace {

bool NameChar(char c, bool first, bool colon) {
  if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') return true;
  if (colon && c == ':') return true;
  return !first && absl::ascii_isdigit(static_cast<unsigned char>(c));
}

bool IsValidName(absl::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

}  // namespace

absl::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

bool IsValidMetricName(absl::string_view name) { return IsValidName(name, true); }

bool IsValidLabelName(absl::string_view name) {
  return IsValidName(name, false) && !absl::StartsWith(name, "__");
}

namespace {

// Backslash and newline as \\ and \n; with `quote`, " as \" too.
std::string Escape(absl::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\' || (quote && c == '"')) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeHelp(absl::string_view help) { return Escape(help, /*quote=*/false); }

std::string EscapeLabelValue(absl::string_view value) {
  return Escape(value, /*quote=*/true);
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest %g that reads back as the same double: 0.1, not
  // 0.10000000000000001; whole numbers without an exponent up to 2^53.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string FormatValue(uint64_t value) { return absl::StrCat(value); }
std::string FormatValue(int64_t value) { return absl::StrCat(value); }

void ExpositionWriter::Family(absl::string_view name, absl::string_view help,
                              MetricType type) {
  absl::StrAppend(out_, "# HELP ", name, " ", EscapeHelp(help), "\n");
  absl::StrAppend(out_, "# TYPE ", name, " ", TypeName(type), "\n");
}

void ExpositionWriter::Sample(absl::string_view name,
                              const std::vector<std::string>& labels,
                              const std::vector<std::string>& values,
                              absl::string_view value, absl::string_view extra_name,
                              absl::string_view extra_value) {
  out_->append(name.data(), name.size());
  if (!labels.empty() || !extra_name.empty()) {
    out_->push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_->push_back(',');
      absl::StrAppend(out_, labels[i], "=\"", EscapeLabelValue(values[i]), "\"");
    }
    if (!extra_name.empty()) {
      if (!labels.empty()) out_->push_back(',');
      absl::StrAppend(out_, extra_name, "=\"", EscapeLabelValue(extra_value), "\"");
    }
    out_->push_back('}');
  }
  absl::StrAppend(out_, " ", value, "\n");
}

}  // namespace fencegate::metrics
