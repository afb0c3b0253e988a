#include "tests/torture/history_checker.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/torture/lease_intervals.h"

namespace fencegate::torture {
namespace {

// Per invariant and resource, report this many cases in full.
constexpr int kMaxReportedPerKey = 5;

class Checker {
 public:
  explicit Checker(const History& history) : h_(history) { t0_ = FirstTime(); }

  CheckResult Run() {
    CountOutcomes();
    CheckTokens();
    for (const WriteOp& op : h_.writes) {
      if (h_.final_state.count(op.resource) == 0) {
        Report(kAcknowledgedWritesSurvive, op.resource, absl::StrCat(
            "resource '", op.resource, "' was written but has no final state to check"));
      }
    }
    for (const auto& [resource, final_state] : h_.final_state) {
      CheckFence(resource, final_state);
      CheckData(resource, final_state);
    }
    CheckLeases();
    return std::move(result_);
  }

 private:
  int64_t FirstTime() const {
    int64_t t = kNever;
    for (const AcquireOp& op : h_.acquires) t = std::min(t, op.invoke_ns);
    for (const LeaseEvent& e : h_.lease_events) t = std::min(t, e.time_ns);
    return t == kNever ? 0 : t;
  }

  // "+12.345s" from the start of the history.
  std::string At(int64_t ns) const {
    if (ns == kNever) return "never";
    return absl::StrFormat("+%.3fs", static_cast<double>(ns - t0_) / 1e9);
  }

  std::string Describe(const Call& call, absl::string_view what, uint64_t token) const {
    return absl::StrCat(call.process, "'s ", what, " with token ", token, " [",
                        At(call.invoke_ns), " .. ", At(call.complete_ns), "]");
  }

  void Report(const std::string& invariant, const std::string& key, std::string detail) {
    int& reported = reported_[{invariant, key}];
    if (++reported > kMaxReportedPerKey) return;
    if (reported == kMaxReportedPerKey) absl::StrAppend(&detail, " (further cases not shown)");
    result_.violations.push_back(Violation{invariant, std::move(detail)});
  }

  void CountOutcomes() {
    CheckStats& s = result_.stats;
    for (const AcquireOp& op : h_.acquires) {
      ++(op.outcome == Outcome::kOk        ? s.acquires_ok
         : op.outcome == Outcome::kRefused ? s.acquires_refused
                                           : s.acquires_unknown);
    }
    for (const FencedReadOp& op : h_.reads) {
      ++(op.outcome == Outcome::kOk        ? s.reads_ok
         : op.outcome == Outcome::kRefused ? s.reads_refused
                                           : s.reads_unknown);
    }
    for (const WriteOp& op : h_.writes) {
      ++(op.outcome == Outcome::kOk        ? s.writes_ok
         : op.outcome == Outcome::kRefused ? s.writes_refused
                                           : s.writes_unknown);
      if (op.outcome == Outcome::kUnknown && InFinalLog(op)) ++s.writes_unknown_applied;
    }
    for (const LeaseEvent& e : h_.lease_events) {
      if (e.kind == LeaseEvent::Kind::kLoad) ++s.lock_service_loads;
    }
  }

  bool InFinalLog(const WriteOp& op) const {
    auto it = h_.final_state.find(op.resource);
    return it != h_.final_state.end() && it->second.log.count(op.log_id) > 0;
  }

  // tokens-unique and tokens-increase-in-real-time.
  void CheckTokens() {
    std::vector<const AcquireOp*> granted;
    for (const AcquireOp& op : h_.acquires) {
      if (op.outcome == Outcome::kOk) granted.push_back(&op);
    }
    std::map<uint64_t, const AcquireOp*> by_token;
    for (const AcquireOp* op : granted) {
      auto [it, inserted] = by_token.emplace(op->token, op);
      if (inserted) continue;
      Report(kTokensUnique, "", absl::StrCat(
          "token ", op->token, " was granted twice: ",
          Describe(*it->second, absl::StrCat("acquire of '", it->second->resource, "'"),
                   op->token),
          " and ", Describe(*op, absl::StrCat("acquire of '", op->resource, "'"), op->token)));
    }
    // Sweep: the largest token returned before each acquire was sent.
    std::vector<const AcquireOp*> by_complete = granted;
    std::sort(by_complete.begin(), by_complete.end(),
              [](auto* a, auto* b) { return a->complete_ns < b->complete_ns; });
    std::sort(granted.begin(), granted.end(),
              [](auto* a, auto* b) { return a->invoke_ns < b->invoke_ns; });
    const AcquireOp* largest = nullptr;
    size_t next = 0;
    for (const AcquireOp* op : granted) {
      while (next < by_complete.size() && by_complete[next]->complete_ns < op->invoke_ns) {
        if (largest == nullptr || by_complete[next]->token > largest->token) {
          largest = by_complete[next];
        }
        ++next;
      }
      if (largest != nullptr && largest->token >= op->token) {
        Report(kTokensIncreaseInRealTime, "", absl::StrCat(
            Describe(*op, absl::StrCat("acquire of '", op->resource, "'"), op->token),
            " was sent after ",
            Describe(*largest, absl::StrCat("acquire of '", largest->resource, "'"),
                     largest->token),
            " had returned, yet its token is not larger"));
      }
    }
  }

  // fence-never-below-acknowledged-token, for one resource.
  void CheckFence(const std::string& resource, const FinalState& final_state) {
    struct Evidence {  // the fence was at least `token` from `at` on
      int64_t at;
      uint64_t token;
      std::string what;
    };
    struct Observation {  // an answer reported fence `fence`; the call was sent at `sent`
      int64_t sent;
      uint64_t fence;
      std::string what;
    };
    std::vector<Evidence> evidence;
    std::vector<Observation> observations;
    for (const FencedReadOp& op : h_.reads) {
      if (op.resource != resource || op.outcome == Outcome::kUnknown) continue;
      const std::string what = Describe(op, "fenced read", op.token);
      if (op.outcome == Outcome::kOk) evidence.push_back({op.complete_ns, op.token, what});
      observations.push_back({op.invoke_ns, op.max_token,
                              absl::StrCat(what, ", ", OutcomeName(op.outcome))});
    }
    for (const WriteOp& op : h_.writes) {
      if (op.resource != resource) continue;
      const std::string what = Describe(op, absl::StrCat("write of ", op.log_id), op.token);
      const bool applied = op.outcome == Outcome::kOk ||
                           (op.outcome == Outcome::kUnknown && InFinalLog(op));
      if (applied && op.complete_ns != kNever) {
        evidence.push_back({op.complete_ns, op.token,
                            absl::StrCat(what, op.outcome == Outcome::kOk ? "" : ", applied")});
      }
      if (op.outcome == Outcome::kUnknown) continue;
      observations.push_back({op.invoke_ns, op.max_token,
                              absl::StrCat(what, ", ", OutcomeName(op.outcome))});
    }
    observations.push_back({final_state.read_ns, final_state.fence, "the final read"});

    std::sort(evidence.begin(), evidence.end(),
              [](const Evidence& a, const Evidence& b) { return a.at < b.at; });
    std::sort(observations.begin(), observations.end(),
              [](const Observation& a, const Observation& b) { return a.sent < b.sent; });
    const Evidence* largest = nullptr;
    size_t next = 0;
    for (const Observation& seen : observations) {
      while (next < evidence.size() && evidence[next].at < seen.sent) {
        if (largest == nullptr || evidence[next].token > largest->token) {
          largest = &evidence[next];
        }
        ++next;
      }
      if (largest != nullptr && largest->token > seen.fence) {
        Report(kFenceNeverBelowAcknowledged, resource, absl::StrCat(
            "resource '", resource, "': ", seen.what, " reported fence ", seen.fence,
            ", below token ", largest->token, " acknowledged before it was sent (",
            largest->what, ")"));
      }
    }
  }

  // acknowledged-writes-survive, no-lost-update, append-log-exact.
  void CheckData(const std::string& resource, const FinalState& final_state) {
    std::map<std::string, const WriteOp*> by_id;
    uint64_t acknowledged = 0, unknown = 0;
    for (const WriteOp& op : h_.writes) {
      if (op.resource != resource) continue;
      by_id[op.log_id] = &op;
      if (op.outcome == Outcome::kOk) ++acknowledged;
      if (op.outcome == Outcome::kUnknown) ++unknown;
      if (op.outcome != Outcome::kOk) continue;
      auto it = final_state.log.find(op.log_id);
      if (it == final_state.log.end()) {
        Report(kAcknowledgedWritesSurvive, resource, absl::StrCat(
            "resource '", resource, "': ", Describe(op, "write", op.token), " of ",
            op.log_id, " = ", op.value, " was acknowledged but is not in the final log"));
      } else if (it->second != op.value) {
        Report(kAcknowledgedWritesSurvive, resource, absl::StrCat(
            "resource '", resource, "': ", Describe(op, "write", op.token), " of ",
            op.log_id, " = ", op.value, " was acknowledged but the final log holds ",
            it->second));
      }
    }
    const uint64_t counter = final_state.counter;
    if (counter < acknowledged || counter > acknowledged + unknown) {
      Report(kNoLostUpdate, resource, absl::StrCat(
          "resource '", resource, "': the final counter is ", counter, " but ",
          acknowledged, " increments were acknowledged and ", unknown,
          " more may have been applied (expected ", acknowledged, "..",
          acknowledged + unknown, ")"));
    }
    std::map<uint64_t, std::vector<std::string>> ids_by_value;
    for (const auto& [id, value] : final_state.log) {
      ids_by_value[value].push_back(id);
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        Report(kAppendLogExact, resource, absl::StrCat(
            "resource '", resource, "': the final log holds ", id, " = ", value,
            ", which no worker wrote"));
      } else if (it->second->outcome == Outcome::kRefused) {
        Report(kAppendLogExact, resource, absl::StrCat(
            "resource '", resource, "': the final log holds ", id, " = ", value, ", but ",
            Describe(*it->second, "write", it->second->token),
            " was refused (fence ", it->second->max_token, ")"));
      }
    }
    for (const auto& [value, ids] : ids_by_value) {
      if (ids.size() > 1) {
        std::string writers;
        for (const std::string& id : ids) {
          auto it = by_id.find(id);
          absl::StrAppend(&writers, writers.empty() ? "" : " and ",
                          it == by_id.end() ? id
                                            : Describe(*it->second, absl::StrCat("write of ", id),
                                                       it->second->token));
        }
        Report(kNoLostUpdate, resource, absl::StrCat(
            "resource '", resource, "': value ", value, " was written by ", writers,
            ": both read ", value - 1, ", so one increment was lost"));
      }
    }
    // Distinct values >= 1, as many as the counter, the largest equal to it:
    // exactly 1..counter.
    const uint64_t held = ids_by_value.size();
    if (held != counter ||
        (held > 0 && (ids_by_value.begin()->first < 1 || ids_by_value.rbegin()->first != counter))) {
      Report(kNoLostUpdate, resource, absl::StrCat(
          "resource '", resource, "': the final counter is ", counter, " but the log holds ",
          held, " distinct values, the largest ",
          held > 0 ? ids_by_value.rbegin()->first : 0, " (expected exactly 1..", counter,
          ")"));
    }
  }

  // leases-do-not-overlap.
  void CheckLeases() {
    std::vector<LeaseInterval> leases = BuildLeaseIntervals(h_.lease_events, h_.acquires);
    result_.stats.leases = static_cast<int>(leases.size());
    std::stable_sort(leases.begin(), leases.end(), [](const auto& a, const auto& b) {
      return std::tie(a.resource, a.start_ns) < std::tie(b.resource, b.start_ns);
    });
    const LeaseInterval* latest = nullptr;  // of the resource: the one that ends last
    for (const LeaseInterval& lease : leases) {
      if (latest != nullptr && latest->resource != lease.resource) latest = nullptr;
      if (latest != nullptr && lease.start_ns < latest->end_ns) {
        Report(kLeasesDoNotOverlap, lease.resource, absl::StrCat(
            "resource '", lease.resource, "': the lease with token ", lease.token,
            " was granted at ", At(lease.start_ns), " while the lease with token ",
            latest->token, " [", At(latest->start_ns), " .. ", At(latest->end_ns), "]",
            latest->forgotten ? " (acknowledged, then forgotten by a restart)" : "",
            " was still held"));
      }
      if (latest == nullptr || lease.end_ns > latest->end_ns) latest = &lease;
    }
  }

  const History& h_;
  int64_t t0_ = 0;
  CheckResult result_;
  std::map<std::pair<std::string, std::string>, int> reported_;
};

}  // namespace

bool CheckResult::Violates(const std::string& invariant) const {
  return std::any_of(violations.begin(), violations.end(),
                     [&](const Violation& v) { return v.invariant == invariant; });
}

CheckResult CheckHistory(const History& history) { return Checker(history).Run(); }

}  // namespace fencegate::torture
