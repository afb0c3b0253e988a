#include "tests/torture/history_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/torture/monotonic_clock.h"

namespace fencegate::torture {
namespace {

absl::Status LineError(absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": '", line, "'"));
}

// Complete lines only: a last line without its newline was cut off.
std::vector<absl::string_view> CompleteLines(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();  // after the last newline: empty, or a cut-off line
  return lines;
}

bool ParseOutcome(absl::string_view word, Outcome* outcome) {
  for (Outcome o : {Outcome::kOk, Outcome::kRefused, Outcome::kUnknown}) {
    if (word == OutcomeName(o)) {
      *outcome = o;
      return true;
    }
  }
  return false;
}

// One op of a worker's file, as its lines are read.
struct PendingOp {
  std::string kind;
  Call call;
  absl::flat_hash_map<std::string, std::string> fields;  // invoke's, then outcome's
};

uint64_t Number(const absl::flat_hash_map<std::string, std::string>& fields,
                absl::string_view key) {
  uint64_t value = 0;
  auto it = fields.find(key);
  if (it != fields.end()) (void)absl::SimpleAtoi(it->second, &value);
  return value;
}

std::string Text(const absl::flat_hash_map<std::string, std::string>& fields,
                 absl::string_view key) {
  auto it = fields.find(key);
  return it == fields.end() ? "" : it->second;
}

// "shared", "permit"; anything else (and no field) is exclusive.
LeaseMode ModeNamed(absl::string_view name) {
  if (name == "shared") return LeaseMode::kShared;
  if (name == "permit") return LeaseMode::kPermit;
  return LeaseMode::kExclusive;
}

void AddOp(PendingOp& op, History* history) {
  const auto& f = op.fields;
  if (op.kind == "acquire") {
    AcquireOp a;
    static_cast<Call&>(a) = op.call;
    a.resource = Text(f, "resource");
    a.holder = Text(f, "holder");
    a.mode = ModeNamed(Text(f, "mode"));
    a.permits = static_cast<uint32_t>(Number(f, "permits"));
    a.token = Number(f, "token");
    if (auto it = f.find("campaign"); it != f.end()) {
      a.campaign = true;
      a.value = it->second;
    }
    history->acquires.push_back(std::move(a));
  } else if (op.kind == "read") {
    FencedReadOp r;
    static_cast<Call&>(r) = op.call;
    r.resource = Text(f, "resource");
    r.gateway = Text(f, "gateway");
    r.mode = ModeNamed(Text(f, "mode"));
    r.token = Number(f, "token");
    r.value = Number(f, "value");
    r.max_token = Number(f, "max_token");
    history->reads.push_back(std::move(r));
  } else if (op.kind == "write") {
    WriteOp w;
    static_cast<Call&>(w) = op.call;
    w.resource = Text(f, "resource");
    w.gateway = Text(f, "gateway");
    w.token = Number(f, "token");
    w.value = Number(f, "value");
    w.log_id = Text(f, "log_id");
    w.max_token = Number(f, "max_token");
    history->writes.push_back(std::move(w));
  } else if (op.kind == "proclaim") {
    ProclaimOp p;
    static_cast<Call&>(p) = op.call;
    p.election = Text(f, "election");
    p.term = Number(f, "term");
    p.value = Text(f, "value");
    p.seq = Number(f, "seq");
    history->proclaims.push_back(std::move(p));
  }
  // Releases are recorded for people reading the file; no invariant needs them.
}

// The key=value fields of a line split at its tabs (after its five
// fixed parts).
absl::flat_hash_map<std::string, std::string> FieldsOf(
    const std::vector<absl::string_view>& parts) {
  absl::flat_hash_map<std::string, std::string> fields;
  for (size_t i = 5; i < parts.size(); ++i) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
    fields[kv.first] = kv.second;
  }
  return fields;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kRefused:
      return "refused";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "?";
}

// ------------------------------------------------------------------ writer

absl::StatusOr<std::unique_ptr<HistoryWriter>> HistoryWriter::Open(const std::string& path,
                                                                  std::string process) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open history file ", path));
  return std::unique_ptr<HistoryWriter>(new HistoryWriter(fd, std::move(process)));
}

HistoryWriter::~HistoryWriter() { close(fd_); }

uint64_t HistoryWriter::Invoke(absl::string_view kind, const Fields& fields) {
  const uint64_t op = next_op_.fetch_add(1);
  Write(op, "invoke", kind, fields);
  return op;
}

void HistoryWriter::Complete(uint64_t op, absl::string_view kind, Outcome outcome,
                             const Fields& fields) {
  Write(op, OutcomeName(outcome), kind, fields);
}

void HistoryWriter::Note(absl::string_view what, const Fields& fields) {
  Write(0, "note", what, fields);
}

void HistoryWriter::Seen(absl::string_view election, const Fields& fields) {
  Write(0, "seen", election, fields);
}

void HistoryWriter::Write(uint64_t op, absl::string_view phase, absl::string_view kind,
                          const Fields& fields) {
  std::string line = absl::StrCat(MonotonicNanos(), "\t", process_, "\t", op, "\t", phase,
                                   "\t", kind);
  for (const auto& [key, value] : fields) {
    // Values never carry the separators.
    absl::StrAppend(&line, "\t", key, "=",
                    absl::StrReplaceAll(value, {{"\t", " "}, {"\n", " "}}));
  }
  line.push_back('\n');
  (void)!write(fd_, line.data(), line.size());  // one write: whole lines only
}

// ----------------------------------------------------------------- parsers

absl::Status ParseWorkerHistory(absl::string_view text, History* history) {
  std::map<std::pair<std::string, uint64_t>, PendingOp> ops;  // in op order
  for (absl::string_view line : CompleteLines(text)) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, '\t');
    int64_t ns = 0;
    uint64_t op = 0;
    if (parts.size() < 5 || !absl::SimpleAtoi(parts[0], &ns) ||
        !absl::SimpleAtoi(parts[2], &op)) {
      return LineError("malformed worker history line", line);
    }
    if (parts[3] == "note") continue;
    if (parts[3] == "seen") {
      absl::flat_hash_map<std::string, std::string> fields = FieldsOf(parts);
      ObservedChange seen;
      seen.process = std::string(parts[1]);
      seen.time_ns = ns;
      seen.election = std::string(parts[4]);
      seen.leader = Text(fields, "leader") == "1";
      seen.term = Number(fields, "term");
      seen.seq = Number(fields, "seq");
      seen.value = Text(fields, "value");
      seen.candidate = Text(fields, "candidate");
      history->observed.push_back(std::move(seen));
      continue;
    }
    PendingOp& pending = ops[{std::string(parts[1]), op}];
    Outcome outcome;
    if (parts[3] == "invoke") {
      pending.kind = std::string(parts[4]);
      pending.call.process = std::string(parts[1]);
      pending.call.invoke_ns = ns;
    } else if (ParseOutcome(parts[3], &outcome)) {
      if (pending.kind != parts[4]) return LineError("outcome without its invoke", line);
      pending.call.complete_ns = ns;
      pending.call.outcome = outcome;
    } else {
      return LineError("unknown phase", line);
    }
    for (auto& [key, value] : FieldsOf(parts)) pending.fields[key] = std::move(value);
  }
  for (auto& [key, op] : ops) AddOp(op, history);
  return absl::OkStatus();
}

absl::Status ParseLeaseHistory(absl::string_view text, History* history,
                               const std::string& instance) {
  static const auto* kinds = new std::map<absl::string_view, LeaseEvent::Kind>{
      {"load", LeaseEvent::Kind::kLoad},       {"restore", LeaseEvent::Kind::kRestore},
      {"grant", LeaseEvent::Kind::kGrant},     {"release", LeaseEvent::Kind::kRelease},
      {"expire", LeaseEvent::Kind::kExpire}};
  for (absl::string_view line : CompleteLines(text)) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, '\t');
    LeaseEvent event;
    // "grant-shared", "restore-permit": a grant or restore of that kind.
    std::pair<absl::string_view, absl::string_view> kind_mode =
        parts.size() >= 2 ? absl::StrSplit(parts[1], absl::MaxSplits('-', 1))
                          : std::pair<absl::string_view, absl::string_view>();
    auto kind = parts.size() == 5 || parts.size() == 6 ? kinds->find(kind_mode.first)
                                                       : kinds->end();
    if (kind == kinds->end() || !absl::SimpleAtoi(parts[0], &event.time_ns) ||
        !absl::SimpleAtoi(parts[3], &event.token) || !absl::SimpleAtoi(parts[4], &event.ttl_ms)) {
      return LineError("malformed lease history line", line);
    }
    event.kind = kind->second;
    event.mode = ModeNamed(kind_mode.second);
    if (event.mode == LeaseMode::kExclusive && !kind_mode.second.empty()) {
      return LineError("unknown lease mode in lease history line", line);
    }
    event.resource = std::string(parts[2]);
    if (parts.size() == 6) event.holder = std::string(parts[5]);
    event.instance = instance;
    history->lease_events.push_back(std::move(event));
  }
  return absl::OkStatus();
}

std::string FormatFinalState(const std::map<std::string, FinalState>& final_state,
                             bool grant_time_fencing,
                             const std::map<std::string, FeedFence>& feed_fences) {
  std::string text = grant_time_fencing ? "fencing\tgrant-time\n" : "";
  for (const auto& [resource, seen] : feed_fences) {
    absl::StrAppend(&text, "feed\t", resource, "\tread_ns=", seen.read_ns,
                    "\tfence=", seen.fence, "\tposition=", seen.position, "\n");
  }
  for (const auto& [resource, state] : final_state) {
    absl::StrAppend(&text, "final\t", resource, "\tread_ns=", state.read_ns,
                    "\tfence=", state.fence, "\tcounter=", state.counter, "\n");
    for (const auto& [id, value] : state.log) {
      absl::StrAppend(&text, "log\t", resource, "\t", id, "\t", value, "\n");
    }
  }
  return text;
}

absl::Status ParseFinalState(absl::string_view text, History* history) {
  for (absl::string_view line : CompleteLines(text)) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, '\t');
    if (parts.size() == 5 && parts[0] == "final") {
      FinalState& state = history->final_state[std::string(parts[1])];
      if (!absl::SimpleAtoi(absl::StripPrefix(parts[2], "read_ns="), &state.read_ns) ||
          !absl::SimpleAtoi(absl::StripPrefix(parts[3], "fence="), &state.fence) ||
          !absl::SimpleAtoi(absl::StripPrefix(parts[4], "counter="), &state.counter)) {
        return LineError("malformed final state line", line);
      }
    } else if (parts.size() == 2 && parts[0] == "fencing" && parts[1] == "grant-time") {
      history->grant_time_fencing = true;
    } else if (parts.size() == 5 && parts[0] == "feed") {
      FeedFence& seen = history->feed_fences[std::string(parts[1])];
      if (!absl::SimpleAtoi(absl::StripPrefix(parts[2], "read_ns="), &seen.read_ns) ||
          !absl::SimpleAtoi(absl::StripPrefix(parts[3], "fence="), &seen.fence) ||
          !absl::SimpleAtoi(absl::StripPrefix(parts[4], "position="), &seen.position)) {
        return LineError("malformed feed line", line);
      }
    } else if (parts.size() == 4 && parts[0] == "log") {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(parts[3], &value)) return LineError("malformed log line", line);
      history->final_state[std::string(parts[1])].log[std::string(parts[2])] = value;
    } else {
      return LineError("malformed final state line", line);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<History> LoadRunDirectory(const std::string& dir) {
  History history;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return absl::NotFoundError(absl::StrCat("no run directory ", dir));
  std::vector<std::string> workers, instances;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (absl::StartsWith(name, "worker-") && absl::EndsWith(name, ".history")) {
      workers.push_back(name);
    }
    if (absl::StartsWith(name, "lockservice") && absl::EndsWith(name, ".history")) {
      instances.push_back(name);
    }
  }
  closedir(d);
  std::sort(workers.begin(), workers.end());
  std::sort(instances.begin(), instances.end());
  for (const std::string& name : workers) {
    absl::Status s = ParseWorkerHistory(ReadWholeFile(absl::StrCat(dir, "/", name)), &history);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
  }
  for (const std::string& name : instances) {
    absl::Status s =
        ParseLeaseHistory(ReadWholeFile(absl::StrCat(dir, "/", name)), &history,
                          std::string(absl::StripSuffix(name, ".history")));
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
  }
  // One timeline: stable, so each instance keeps its own order.
  std::stable_sort(
      history.lease_events.begin(), history.lease_events.end(),
      [](const LeaseEvent& a, const LeaseEvent& b) { return a.time_ns < b.time_ns; });
  absl::Status s = ParseFinalState(ReadWholeFile(dir + "/final.tsv"), &history);
  if (!s.ok()) return s;
  return history;
}

}  // namespace fencegate::torture
