#include "common/metrics/key_figures.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/metrics/exposition.h"

namespace fencegate::metrics {
namespace {

// Parses {a="x",b="y"} at the start of `rest`, leaving what follows.
bool ParseLabels(absl::string_view& rest, std::map<std::string, std::string>& labels) {
  if (!absl::ConsumePrefix(&rest, "{")) return true;
  for (;;) {
    if (absl::ConsumePrefix(&rest, "}")) return true;
    const size_t eq = rest.find("=\"");
    if (eq == absl::string_view::npos) return false;
    std::string name(rest.substr(0, eq));
    rest.remove_prefix(eq + 2);
    std::string value;
    for (;;) {
      if (rest.empty()) return false;
      const char c = rest.front();
      rest.remove_prefix(1);
      if (c == '"') break;
      if (c == '\\' && !rest.empty()) {
        const char e = rest.front();
        rest.remove_prefix(1);
        value += e == 'n' ? '\n' : e;
      } else {
        value += c;
      }
    }
    labels[name] = std::move(value);
    absl::ConsumePrefix(&rest, ",");
  }
}

bool ParseValue(absl::string_view text, double* value) {
  if (text == "+Inf") {
    *value = INFINITY;
  } else if (text == "-Inf") {
    *value = -INFINITY;
  } else if (text == "NaN") {
    *value = NAN;
  } else {
    return absl::SimpleAtod(text, value);
  }
  return true;
}

std::string Count(double v) { return absl::StrFormat("%.0f", v); }

std::string Duration(double seconds) {
  if (seconds < 0.001) return absl::StrFormat("%.0f us", seconds * 1e6);
  if (seconds < 1) return absl::StrFormat("%.1f ms", seconds * 1e3);
  if (seconds < 120) return absl::StrFormat("%.1f s", seconds);
  return absl::FormatDuration(absl::Seconds(std::floor(seconds)));
}

class FigureList {
 public:
  explicit FigureList(const std::vector<Sample>& samples) : samples_(samples) {}

  std::optional<double> Sum(absl::string_view name,
                            const std::map<std::string, std::string>& match = {}) const {
    return SumOf(samples_, name, match);
  }
  void Number(const char* key, const char* label, std::optional<double> v) {
    if (v) figures_.push_back({key, label, *v, Count(*v)});
  }
  void Text(const char* key, const char* label, std::string text) {
    figures_.push_back({key, label, std::nullopt, std::move(text)});
  }
  void NumberAs(const char* key, const char* label, double v, std::string text) {
    figures_.push_back({key, label, v, std::move(text)});
  }
  // The mean of histogram `name` over its life.
  void Mean(const char* key, const char* label, const std::string& name) {
    std::optional<double> sum = Sum(name + "_sum");
    std::optional<double> count = Sum(name + "_count");
    if (!sum || !count) return;
    if (*count == 0) {
      Text(key, label, "none yet");
    } else {
      NumberAs(key, label, *sum / *count,
               absl::StrCat(Duration(*sum / *count), " mean of ", Count(*count)));
    }
  }
  std::vector<Figure> Take() { return std::move(figures_); }

 private:
  const std::vector<Sample>& samples_;
  std::vector<Figure> figures_;
};

void LockFigures(FigureList& f) {
  if (std::optional<double> leader = f.Sum("fencegate_lock_leader")) {
    f.Text("role", "Role", *leader > 0 ? "leader" : "standby (forwards to the leader)");
  }
  f.Number("leases_held", "Leases held", f.Sum("fencegate_lock_leases_held"));
  f.Number("waiters", "Waiting Acquires", f.Sum("fencegate_lock_waiters"));
  f.Number("last_token", "Last token issued", f.Sum("fencegate_lock_last_token"));
  f.Number("grants", "Leases granted", f.Sum("fencegate_lock_grants_total"));
  f.Number("expirations", "Leases expired under their holder",
           f.Sum("fencegate_lock_expirations_total"));
  f.Number("lease_lost", "Renew/release refused (lease lost)",
           f.Sum("fencegate_lock_lease_lost_total"));
  f.Number("lock_delay_refusals", "Try-locks refused in lock-delay",
           f.Sum("fencegate_lock_not_granted_total", {{"reason", "lock_delay"}}));
  f.Number("wait_timeouts", "Waits that ran out",
           f.Sum("fencegate_lock_not_granted_total", {{"reason", "wait_timeout"}}));
  f.Mean("commit_seconds", "Store commit", "fencegate_lock_commit_seconds");
  f.Number("commit_failures", "Store commits failed",
           f.Sum("fencegate_lock_commit_failures_total"));
  f.Number("leader_changes", "Leader changes seen",
           f.Sum("fencegate_lock_leader_changes_total"));
}

void GatewayFigures(FigureList& f) {
  f.Number("stale_writes_refused", "Stale writes refused",
           f.Sum("fencegate_gateway_stale_refused_total", {{"rpc", "write"}}));
  f.Number("stale_refused", "Stale requests refused (writes, fenced reads, fences)",
           f.Sum("fencegate_gateway_stale_refused_total"));
  f.Number("requests_ok", "Requests answered OK",
           f.Sum("fencegate_gateway_requests_total", {{"result", "ok"}}));
  std::optional<double> all = f.Sum("fencegate_gateway_requests_total");
  std::optional<double> ok =
      f.Sum("fencegate_gateway_requests_total", {{"result", "ok"}});
  if (all && ok) f.Number("requests_refused", "Requests refused or failed", *all - *ok);
  if (std::optional<double> caught_up = f.Sum("fencegate_gateway_feed_caught_up")) {
    f.Text("feed", "Grant-time feed",
           *caught_up > 0 ? "live (caught up)" : "catching up or disconnected");
    f.Number("feed_fence_raises", "Fences raised by the feed",
             f.Sum("fencegate_gateway_fence_raises_total", {{"source", "feed"}}));
    f.Number("feed_positions_behind", "Feed positions behind",
             f.Sum("fencegate_gateway_feed_positions_behind"));
    if (std::optional<double> idle =
            f.Sum("fencegate_gateway_feed_seconds_since_event")) {
      f.Text("feed_seconds_since_event", "Since the feed's last event", Duration(*idle));
    }
  } else {
    f.Text("feed", "Grant-time feed", "off (no --lockservice)");
  }
  f.Mean("commit_seconds", "Storage commit", "fencegate_gateway_commit_seconds");
  f.Number("storage_errors", "Storage errors",
           f.Sum("fencegate_gateway_storage_errors_total"));
  f.Number("postgres_idle", "PostgreSQL read connections idle",
           f.Sum("fencegate_gateway_postgres_read_connections", {{"state", "idle"}}));
  f.Number("postgres_busy", "PostgreSQL read connections busy",
           f.Sum("fencegate_gateway_postgres_read_connections", {{"state", "busy"}}));
}

}  // namespace

absl::StatusOr<std::vector<Sample>> ParseExposition(absl::string_view text) {
  std::vector<Sample> samples;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    Sample sample;
    size_t end = 0;
    while (end < line.size() && line[end] != '{' && line[end] != ' ') ++end;
    sample.name = std::string(line.substr(0, end));
    absl::string_view rest = line.substr(end);
    if (!IsValidMetricName(sample.name) || !ParseLabels(rest, sample.labels) ||
        !ParseValue(absl::StripAsciiWhitespace(rest), &sample.value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, " is not a Prometheus sample: ", line));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::optional<double> SumOf(const std::vector<Sample>& samples, absl::string_view name,
                            const std::map<std::string, std::string>& match) {
  std::optional<double> sum;
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool matches = true;
    for (const auto& [label, value] : match) {
      auto it = s.labels.find(label);
      if (it == s.labels.end() || it->second != value) matches = false;
    }
    if (matches) sum = sum.value_or(0) + s.value;
  }
  return sum;
}

std::vector<Figure> KeyFigures(const std::vector<Sample>& samples, absl::Time now) {
  FigureList f(samples);
  std::string program;
  for (const Sample& s : samples) {
    if (s.name != "fencegate_build_info") continue;
    program = s.labels.count("program") ? s.labels.at("program") : "";
    const std::string sha = s.labels.count("git_sha") ? s.labels.at("git_sha") : "";
    f.Text("version", "Version",
           absl::StrCat(s.labels.count("version") ? s.labels.at("version") : "?",
                        sha.empty() ? "" : absl::StrCat(" (git ", sha, ")")));
  }
  if (std::optional<double> start = f.Sum("process_start_time_seconds")) {
    f.Text("uptime", "Up for",
           absl::FormatDuration(absl::Seconds(std::floor(std::max(
               0.0, absl::ToDoubleSeconds(now - absl::FromUnixSeconds(0)) - *start)))));
  }
  if (program == "fencegate-gateway" ||
      (program.empty() && SumOf(samples, "fencegate_gateway_requests_total"))) {
    GatewayFigures(f);
  } else {
    LockFigures(f);
  }
  f.Number("rpcs_in_flight", "gRPC calls in flight",
           f.Sum("fencegate_grpc_server_in_flight"));
  if (std::optional<double> rss = f.Sum("process_resident_memory_bytes")) {
    f.NumberAs("resident_memory_bytes", "Resident memory", *rss,
               absl::StrFormat("%.1f MiB", *rss / 1048576));
  }
  f.Number("open_fds", "Open file descriptors", f.Sum("process_open_fds"));
  return f.Take();
}

std::string FiguresJson(const std::vector<Figure>& figures) {
  std::string json = "{";
  for (size_t i = 0; i < figures.size(); ++i) {
    const Figure& f = figures[i];
    absl::StrAppend(&json, i > 0 ? "," : "", "\"", f.key, "\":");
    if (f.number && std::isfinite(*f.number)) {
      absl::StrAppend(&json, FormatValue(*f.number));
    } else {
      std::string escaped;
      for (char c : f.text) {
        if (c == '"' || c == '\\') escaped += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&escaped, absl::StrFormat("\\u%04x", c));
          continue;
        }
        escaped += c;
      }
      absl::StrAppend(&json, "\"", escaped, "\"");
    }
  }
  return json + "}";
}

}  // namespace fencegate::metrics
