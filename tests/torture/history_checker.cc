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
    CheckStaleWritesAcrossGateways();
    if (h_.grant_time_fencing) CheckGrantTimeFences();
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
      if (op.gateway == kSqlPath) {
        ++(op.outcome == Outcome::kOk        ? s.sql_writes_ok
           : op.outcome == Outcome::kRefused ? s.sql_writes_refused
                                             : s.sql_writes_unknown);
      }
    }
    std::string leader;
    for (const LeaseEvent& e : h_.lease_events) {
      if (e.kind != LeaseEvent::Kind::kLoad) continue;
      ++s.lock_service_loads;
      if (e.instance != leader) ++s.leaders;
      leader = e.instance;
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

  // "the lease with token 7 (lockservice-1, deposed)".
  static std::string Lease(const LeaseInterval& lease) {
    return absl::StrCat(
        "the lease with token ", lease.token, " (", lease.instance,
        lease.deposed ? ", granted while another instance led" : "",
        lease.forgotten ? ", acknowledged, then forgotten by a restart" : "", ")");
  }

  // leases-do-not-overlap and tokens-increase-across-leaders.
  void CheckLeases() {
    std::vector<LeaseInterval> leases = BuildLeaseIntervals(h_.lease_events, h_.acquires);
    result_.stats.leases = static_cast<int>(leases.size());
    for (const LeaseInterval& lease : leases)
      result_.stats.deposed_leases += lease.deposed;
    std::stable_sort(leases.begin(), leases.end(), [](const auto& a, const auto& b) {
      return std::tie(a.resource, a.start_ns) < std::tie(b.resource, b.start_ns);
    });
    const LeaseInterval* latest = nullptr;  // of the resource: the one that ends last
    for (const LeaseInterval& lease : leases) {
      if (latest != nullptr && latest->resource != lease.resource) latest = nullptr;
      if (latest != nullptr && lease.start_ns < latest->end_ns) {
        Report(kLeasesDoNotOverlap, lease.resource,
               absl::StrCat("resource '", lease.resource, "': ", Lease(lease),
                            " was granted at ", At(lease.start_ns), " while ",
                            Lease(*latest), " [", At(latest->start_ns), " .. ",
                            At(latest->end_ns), "] was still held"));
      }
      if (latest == nullptr || lease.end_ns > latest->end_ns) latest = &lease;
    }
    // Grants in the order the service made them, whoever led.
    std::vector<const LeaseInterval*> grants;
    for (const LeaseInterval& lease : leases) {
      if (lease.granted) grants.push_back(&lease);
    }
    std::stable_sort(grants.begin(), grants.end(),
                     [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    const LeaseInterval* largest = nullptr;  // acknowledged, granted before
    for (const LeaseInterval* grant : grants) {
      if (largest != nullptr && grant->token <= largest->token &&
          grant->start_ns > largest->start_ns) {
        Report(kTokensIncreaseAcrossLeaders, "",
               absl::StrCat(Lease(*grant), " on '", grant->resource, "' was granted at ",
                            At(grant->start_ns), " after ", Lease(*largest), " on '",
                            largest->resource, "' had been granted at ",
                            At(largest->start_ns),
                            " and acknowledged, yet its token is not larger"));
      }
      if (grant->acknowledged && (largest == nullptr || grant->token > largest->token)) {
        largest = grant;
      }
    }
  }

  // stale-write-through-another-gateway.
  void CheckStaleWritesAcrossGateways() {
    struct Ack {  // `gateway` acknowledged `token` on `resource` at `at`
      int64_t at;
      uint64_t token;
      const Call* call;
      const std::string* gateway;
    };
    std::map<std::string, std::vector<Ack>> acks;  // by resource
    for (const FencedReadOp& op : h_.reads) {
      if (op.outcome == Outcome::kOk && !op.gateway.empty()) {
        acks[op.resource].push_back({op.complete_ns, op.token, &op, &op.gateway});
      }
    }
    for (const WriteOp& op : h_.writes) {
      if (op.outcome == Outcome::kOk && !op.gateway.empty()) {
        acks[op.resource].push_back({op.complete_ns, op.token, &op, &op.gateway});
      }
    }
    for (auto& [resource, list] : acks) {
      std::sort(list.begin(), list.end(),
                [](const Ack& a, const Ack& b) { return a.at < b.at; });
    }
    std::vector<const WriteOp*> accepted;
    for (const WriteOp& op : h_.writes) {
      if (op.outcome == Outcome::kOk && !op.gateway.empty()) accepted.push_back(&op);
    }
    std::sort(accepted.begin(), accepted.end(),
              [](auto* a, auto* b) { return a->invoke_ns < b->invoke_ns; });
    // Per resource: the largest acknowledged token per gateway so far.
    std::map<std::string, std::map<std::string, const Ack*>> largest;
    std::map<std::string, size_t> next;
    for (const WriteOp* write : accepted) {
      const std::vector<Ack>& list = acks[write->resource];
      size_t& i = next[write->resource];
      auto& by_gateway = largest[write->resource];
      for (; i < list.size() && list[i].at < write->invoke_ns; ++i) {
        const Ack*& best = by_gateway[*list[i].gateway];
        if (best == nullptr || list[i].token > best->token) best = &list[i];
      }
      for (const auto& [gateway, ack] : by_gateway) {
        if (gateway == write->gateway || ack->token <= write->token) continue;
        Report(
            kStaleWriteThroughAnotherGateway, write->resource,
            absl::StrCat(
                "resource '", write->resource, "': ",
                Describe(*write, absl::StrCat("write of ", write->log_id), write->token),
                " was accepted by gateway ", write->gateway, " after gateway ", gateway,
                " had acknowledged token ", ack->token, " (", ack->call->process, " [",
                At(ack->call->invoke_ns), " .. ", At(ack->call->complete_ns), "])"));
      }
    }
  }

  // grant-time-fence-reaches-gateways.
  void CheckGrantTimeFences() {
    for (const AcquireOp& op : h_.acquires) {
      if (op.outcome != Outcome::kOk) continue;
      auto it = h_.feed_fences.find(op.resource);
      if (it == h_.feed_fences.end()) {
        Report(kGrantTimeFenceReachesGateways, op.resource,
               absl::StrCat("resource '", op.resource,
                            "': ", Describe(op, "acquire", op.token),
                            " was acknowledged, but the lock service's fence feed has no "
                            "position for it"));
        continue;
      }
      const FeedFence& seen = it->second;
      if (op.complete_ns > seen.read_ns || seen.fence >= op.token) continue;
      Report(kGrantTimeFenceReachesGateways, op.resource,
             absl::StrCat("resource '", op.resource,
                          "': after the run the gateways' fence was ", seen.fence, " at ",
                          At(seen.read_ns), " (the lock service's position ",
                          seen.position, "), below ", Describe(op, "acquire", op.token),
                          ": the fence feed never brought that grant to the gateways"));
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
