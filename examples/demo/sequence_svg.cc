#include "examples/demo/sequence_svg.h"

#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/metrics/html_escape.h"

namespace fencegate::demo {
namespace {

constexpr double kLeft = 64;  // the time column
constexpr double kLaneWidth = 210;
constexpr double kWidth = kLeft + kLaneWidth * kLaneCount + 16;
constexpr double kLaneTop = 62;  // lane name boxes
constexpr double kRow = 30;
constexpr double kSectionBand = 48;
constexpr double kCharWidth = 6.8;  // 12px DejaVu Sans, on average

double LaneX(Lane lane) {
  return kLeft + kLaneWidth * static_cast<int>(lane) + kLaneWidth / 2;
}

// Characters, not bytes: an arrow or a cross is one.
double TextWidth(const std::string& text) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return chars * kCharWidth;
}

// The colours an outcome is drawn in: its outline (and arrow, and text)
// and its fill.
struct Colors {
  const char* stroke;
  const char* fill;
};
Colors ColorsOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return {"#1a7f37", "#dafbe1"};
    case Outcome::kRefused:
      return {"#cf222e", "#ffebe9"};
    case Outcome::kDamage:
      return {"#a21caf", "#fbefff"};
    case Outcome::kNote:
      return {"#9a6700", "#fff8c5"};
  }
  return {"#24292f", "#ffffff"};
}
const char* Stroke(Outcome outcome) { return ColorsOf(outcome).stroke; }
const char* Fill(Outcome outcome) { return ColorsOf(outcome).fill; }

std::string Text(double x, double y, const std::string& text, const std::string& attrs) {
  return absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" %s>%s</text>\n", x, y, attrs,
                         HtmlEscape(text));
}

std::string Label(const Step& step) {
  if (!step.label.empty()) return step.label;
  return step.result.empty() ? step.action
                             : absl::StrCat(step.action, " → ", step.result);
}

std::string Arrow(const Step& step, double y) {
  const double x1 = LaneX(step.actor);
  const double x2 = LaneX(step.target);
  const double dir = x2 > x1 ? 1 : -1;
  const double end = x2 - dir * (step.outcome == Outcome::kRefused ? 12 : 2);
  const char* color = Stroke(step.outcome);
  std::string svg = absl::StrFormat(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
      "stroke-width=\"1.6\"%s/>\n",
      x1, y + 7, end, y + 7, color,
      step.outcome == Outcome::kRefused
          ? ""
          : absl::StrFormat(" marker-end=\"url(#head-%d)\"",
                            static_cast<int>(step.outcome)));
  if (step.outcome == Outcome::kRefused) {  // the cross where it was stopped
    const double cx = x2 - dir * 6;
    svg += absl::StrFormat(
        "<path d=\"M%.1f %.1f l10 10 M%.1f %.1f l-10 10\" stroke=\"%s\" "
        "stroke-width=\"2.4\"/>\n",
        cx - 5, y + 2, cx + 5, y + 2, color);
  }
  const std::string label = Label(step);
  const double half = TextWidth(label) / 2;
  const double mid = std::clamp((x1 + x2) / 2, kLeft + 4 + half, kWidth - 4 - half);
  svg +=
      Text(mid, y + 1, label,
           absl::StrFormat("text-anchor=\"middle\" fill=\"%s\" class=\"halo\"", color));
  return svg;
}

std::string NoteBox(const Step& step, double y) {
  const std::string label = Label(step);
  const double w = std::max(60.0, TextWidth(label) + 16);
  const double x = std::clamp(LaneX(step.actor) - w / 2, kLeft + 2, kWidth - 2 - w);
  return absl::StrFormat(
             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" rx=\"4\" "
             "fill=\"%s\" stroke=\"%s\"/>\n",
             x, y - 8, w, Fill(step.outcome), Stroke(step.outcome)) +
         Text(x + w / 2, y + 6, label, "text-anchor=\"middle\" fill=\"#24292f\"");
}

}  // namespace

std::string RenderSequenceSvg(const std::string& title,
                              const std::vector<Section>& sections,
                              const std::vector<Step>& steps) {
  // Layout: the y of each section band and each step row.
  std::vector<double> section_y(sections.size());
  std::vector<double> row_y(steps.size());
  double y = kLaneTop + 44;
  size_t next_section = 0;
  for (size_t i = 0; i <= steps.size(); ++i) {
    while (next_section < sections.size() && sections[next_section].first_step == i) {
      section_y[next_section++] = y;
      y += kSectionBand + 16;
    }
    if (i < steps.size()) {
      row_y[i] = y;
      y += kRow;
    }
  }
  const double height = y + 12;

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, "
      "sans-serif\" font-size=\"12\">\n",
      kWidth, height, kWidth, height);
  svg +=
      "<style>.halo{paint-order:stroke;stroke:#fff;stroke-width:4px;"
      "stroke-linejoin:round}</style>\n<defs>\n";
  for (Outcome o : {Outcome::kOk, Outcome::kRefused, Outcome::kNote, Outcome::kDamage}) {
    svg += absl::StrFormat(
        "<marker id=\"head-%d\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        "markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path d=\"M0 0 L10 5 "
        "L0 10 z\" fill=\"%s\"/></marker>\n",
        static_cast<int>(o), Stroke(o));
  }
  svg += "</defs>\n";
  svg += absl::StrFormat("<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
                         kWidth, height);
  svg += Text(16, 26, title, "font-size=\"17\" font-weight=\"bold\" fill=\"#24292f\"");
  svg += Text(16, 46,
              "green: accepted  ·  red ✗: refused (by the gateway's fence or the lock "
              "service)  ·  magenta: a stale write that got through  ·  bars: a client "
              "frozen (grey) or cut off (amber)",
              "fill=\"#57606a\" font-size=\"11\"");

  // Lanes: name boxes and dashed lifelines.
  for (int i = 0; i < kLaneCount; ++i) {
    const Lane lane = static_cast<Lane>(i);
    const double x = LaneX(lane);
    svg += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#8c959f\" "
        "stroke-dasharray=\"4 4\"/>\n",
        x, kLaneTop + 26, x, height - 6);
    svg += absl::StrFormat(
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"150\" height=\"26\" rx=\"5\" "
        "fill=\"#ddf4ff\" stroke=\"#54aeff\"/>\n",
        x - 75, kLaneTop);
    svg += Text(x, kLaneTop + 17, LaneName(lane),
                "text-anchor=\"middle\" font-weight=\"bold\" fill=\"#0a3069\"");
  }

  // Periods along a lane (frozen, cut off), under everything else.
  std::map<Lane, double> open;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.span == Span::kFrozenBegin || s.span == Span::kCutOffBegin) {
      open[s.actor] = row_y[i];
    } else if ((s.span == Span::kFrozenEnd || s.span == Span::kCutOffEnd) &&
               open.count(s.actor)) {
      const bool frozen = s.span == Span::kFrozenEnd;
      svg += absl::StrFormat(
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%.1f\" fill=\"%s\" "
          "opacity=\"0.55\"%s/>\n",
          LaneX(s.actor) - 8, open[s.actor], row_y[i] - open[s.actor],
          frozen ? "#8c959f" : "#d4a72c", frozen ? "" : " stroke-dasharray=\"3 3\"");
      open.erase(s.actor);
    }
  }

  for (size_t k = 0; k < sections.size(); ++k) {
    const double sy = section_y[k];
    svg += absl::StrFormat(
        "<rect x=\"4\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" rx=\"4\" "
        "fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>\n",
        sy, kWidth - 8, kSectionBand);
    svg += Text(14, sy + 19, sections[k].title,
                "font-size=\"14\" font-weight=\"bold\" fill=\"#24292f\"");
    svg += Text(14, sy + 38, sections[k].subtitle, "fill=\"#57606a\"");
  }

  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    svg += Text(8, row_y[i] + 10, absl::StrFormat("%.2fs", absl::ToDoubleSeconds(s.at)),
                "fill=\"#8c959f\" font-size=\"11\"");
    svg += s.actor == s.target ? NoteBox(s, row_y[i]) : Arrow(s, row_y[i]);
  }
  svg += "</svg>\n";
  return svg;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& svg) {
  std::error_code error;
  const std::filesystem::path target = std::filesystem::absolute(path, error);
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), error);
  }
  const std::string temp = absl::StrCat(target.string(), ".tmp.", getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << svg;
    out.close();
    if (!out) {
      return absl::UnavailableError(absl::StrCat("cannot write ", temp));
    }
  }
  if (rename(temp.c_str(), target.c_str()) != 0) {
    unlink(temp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename ", temp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace fencegate::demo
