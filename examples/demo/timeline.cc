#include "examples/demo/timeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace fencegate::demo {

const char* LaneName(Lane lane) {
  switch (lane) {
    case Lane::kClient1:
      return "client 1";
    case Lane::kLockService:
      return "lock service";
    case Lane::kClient2:
      return "client 2";
    case Lane::kGateway:
      return "gateway";
    case Lane::kPlainStore:
      return "plain SQLite";
    case Lane::kSqlTable:
      return "your PG table";
  }
  return "?";
}

Timeline::Timeline(std::ostream* out, bool color)
    : out_(out), color_(color), start_(absl::Now()) {}

std::string Timeline::Paint(const std::string& text, Outcome outcome) const {
  if (!color_) return text;
  const char* code = "";
  switch (outcome) {
    case Outcome::kOk:
      code = "\033[32m";  // green
      break;
    case Outcome::kRefused:
      code = "\033[1;31m";  // bold red
      break;
    case Outcome::kNote:
      code = "\033[33m";  // yellow
      break;
    case Outcome::kDamage:
      code = "\033[1;35m";  // bold magenta
      break;
  }
  return absl::StrCat(code, text, "\033[0m");
}

void Timeline::BeginSection(std::string title, std::string subtitle) {
  absl::MutexLock lock(&mu_);
  sections_.push_back(Section{title, subtitle, steps_.size()});
  *out_ << "\n"
        << (color_ ? "\033[1m" : "") << "== " << title
        << " ==" << (color_ ? "\033[0m" : "") << "\n"
        << subtitle << "\n\n"
        << absl::StrFormat("  %7s  %-13s%-42s %5s  %s\n", "time", "who", "action",
                           "token", "result");
  out_->flush();
}

void Timeline::Print(const Step& step) {
  const std::string time = absl::StrFormat("%.2fs", absl::ToDoubleSeconds(step.at));
  const char* who = LaneName(step.actor);
  const std::string token = step.token == 0 ? "" : absl::StrCat(step.token);
  if (step.actor == step.target && step.result.empty()) {
    *out_ << absl::StrFormat("  %7s  %-13s", time, who)
          << Paint(absl::StrCat("* ", step.action), step.outcome) << "\n";
  } else {
    *out_ << absl::StrFormat("  %7s  %-13s%-42s %5s  ", time, who, step.action, token)
          << Paint(step.result, step.outcome) << "\n";
  }
  out_->flush();
}

void Timeline::Add(Step step) {
  absl::MutexLock lock(&mu_);
  step.at = Elapsed();
  Print(step);
  steps_.push_back(std::move(step));
}

void Timeline::Note(Lane lane, std::string text, std::string label, Outcome outcome,
                    Span span) {
  Step step;
  step.actor = step.target = lane;
  step.action = std::move(text);
  step.label = std::move(label);
  step.outcome = outcome;
  step.span = span;
  Add(std::move(step));
}

void Timeline::Say(const std::string& text) {
  absl::MutexLock lock(&mu_);
  *out_ << "           " << text << "\n";
  out_->flush();
}

std::vector<Step> Timeline::steps() const {
  absl::MutexLock lock(&mu_);
  return steps_;
}

std::vector<Section> Timeline::sections() const {
  absl::MutexLock lock(&mu_);
  return sections_;
}

}  // namespace fencegate::demo
