#include "tests/torture/history_checker.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/torture/election_checker.h"
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
    CheckReads();
    CheckSharedReads();
    CheckStaleWritesAcrossGateways();
    if (h_.grant_time_fencing) CheckGrantTimeFences();
    CheckElections(h_, &result_);
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
      if (op.mode == LeaseMode::kShared) {
        s.shared_reads_ok += op.outcome == Outcome::kOk;
        s.shared_reads_refused += op.outcome == Outcome::kRefused;
      }
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
      // A shared token's read moves no fence (docs/gateway.md, "Shared tokens").
      if (op.outcome == Outcome::kOk && op.mode == LeaseMode::kExclusive) {
        evidence.push_back({op.complete_ns, op.token, what});
      }
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
        "the ", LeaseModeName(lease.mode), " lease with token ", lease.token, " (",
        lease.instance,
        lease.holder.empty() ? std::string() : absl::StrCat(", holder ", lease.holder),
        lease.deposed ? ", granted while another instance led" : "",
        lease.forgotten ? ", acknowledged, then forgotten by a restart" : "", ")");
  }

  // leases-do-not-overlap, permits-at-most-n, refused-acquire-holds-nothing
  // and tokens-increase-across-leaders.
  void CheckLeases() {
    std::vector<LeaseInterval> leases = BuildLeaseIntervals(h_.lease_events, h_.acquires);
    result_.stats.leases = static_cast<int>(leases.size());
    for (const LeaseInterval& lease : leases) {
      result_.stats.deposed_leases += lease.deposed;
      result_.stats.shared_leases += lease.mode == LeaseMode::kShared;
      result_.stats.permit_leases += lease.mode == LeaseMode::kPermit;
    }
    std::stable_sort(leases.begin(), leases.end(), [](const auto& a, const auto& b) {
      return std::tie(a.resource, a.start_ns) < std::tie(b.resource, b.start_ns);
    });
    // Of the resource, the lease that ends last: of any kind, and exclusive.
    const LeaseInterval* latest = nullptr;
    const LeaseInterval* latest_exclusive = nullptr;
    for (const LeaseInterval& lease : leases) {
      if (latest != nullptr && latest->resource != lease.resource) {
        latest = latest_exclusive = nullptr;
      }
      // Shared leases and permits may overlap each other, nothing else may.
      const LeaseInterval* other =
          lease.mode == LeaseMode::kExclusive ? latest : latest_exclusive;
      if (other != nullptr && lease.start_ns < other->end_ns) {
        Report(kLeasesDoNotOverlap, lease.resource,
               absl::StrCat("resource '", lease.resource, "': ", Lease(lease),
                            " was granted at ", At(lease.start_ns), " while ",
                            Lease(*other), " [", At(other->start_ns), " .. ",
                            At(other->end_ns), "] was still held"));
      }
      if (latest == nullptr || lease.end_ns > latest->end_ns) latest = &lease;
      if (lease.mode == LeaseMode::kExclusive &&
          (latest_exclusive == nullptr || lease.end_ns > latest_exclusive->end_ns)) {
        latest_exclusive = &lease;
      }
    }
    CheckPermits(leases);
    CheckRefusedAcquires(leases);
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

  // permits-at-most-n: per semaphore, at most N permits held at any moment,
  // N as its Acquires named it (the service refuses another N while it is
  // in use). `leases` is sorted by resource and start.
  void CheckPermits(const std::vector<LeaseInterval>& leases) {
    std::map<std::string, uint32_t> size;  // by resource
    for (const AcquireOp& op : h_.acquires) {
      if (op.mode == LeaseMode::kPermit && op.outcome == Outcome::kOk) {
        size[op.resource] = op.permits;
      }
    }
    std::map<std::string, std::vector<const LeaseInterval*>> held;  // by resource
    for (const LeaseInterval& lease : leases) {
      if (lease.mode != LeaseMode::kPermit) continue;
      std::vector<const LeaseInterval*>& now = held[lease.resource];
      // Those still held when this one began (an end at the same moment
      // frees its permit first).
      now.erase(std::remove_if(
                    now.begin(), now.end(),
                    [&](const LeaseInterval* l) { return l->end_ns <= lease.start_ns; }),
                now.end());
      now.push_back(&lease);
      auto n = size.find(lease.resource);
      if (n == size.end() || now.size() <= n->second) continue;
      std::string holders;
      for (const LeaseInterval* l : now) {
        absl::StrAppend(&holders, holders.empty() ? "" : ", ", l->token, " [",
                        At(l->start_ns), " .. ", At(l->end_ns), "]");
      }
      Report(
          kPermitsAtMostN, lease.resource,
          absl::StrCat("semaphore '", lease.resource, "' of ", n->second,
                       " permits: ", Lease(lease), " was granted at ", At(lease.start_ns),
                       ", making ", now.size(), " held at once (tokens ", holders, ")"));
    }
  }

  // refused-acquire-holds-nothing: when an Acquire is answered "not
  // acquired", its holder holds no lease on the resource (a multi-resource
  // Acquire is granted all together or not at all). Holders are fresh each
  // round, so any lease of theirs came from this Acquire.
  void CheckRefusedAcquires(const std::vector<LeaseInterval>& leases) {
    std::map<std::pair<std::string, std::string>, std::vector<const LeaseInterval*>>
        by_holder;
    for (const LeaseInterval& lease : leases) {
      if (!lease.holder.empty())
        by_holder[{lease.resource, lease.holder}].push_back(&lease);
    }
    for (const AcquireOp& op : h_.acquires) {
      if (op.outcome != Outcome::kRefused || op.holder.empty()) continue;
      auto it = by_holder.find({op.resource, op.holder});
      if (it == by_holder.end()) continue;
      for (const LeaseInterval* lease : it->second) {
        if (lease->start_ns > op.complete_ns || lease->end_ns <= op.complete_ns) continue;
        Report(kRefusedAcquireHoldsNothing, op.resource,
               absl::StrCat("resource '", op.resource, "': ",
                            Describe(op, absl::StrCat("acquire by ", op.holder), 0),
                            " was answered 'not acquired' while ", Lease(*lease), " [",
                            At(lease->start_ns), " .. ", At(lease->end_ns),
                            "] was held for that holder"));
      }
    }
  }

  // reads-see-no-overwritten-value: an accepted fenced read, exclusive or
  // shared, returns no value older than one an acknowledged write had
  // stored before the read was sent (no stale copy is served: the counter
  // only grows, as every accepted increment read the value before it).
  void CheckReads() {
    std::map<std::string, std::vector<const WriteOp*>> writes;  // by resource
    for (const WriteOp& op : h_.writes) {
      if (op.outcome == Outcome::kOk) writes[op.resource].push_back(&op);
    }
    for (auto& [resource, list] : writes) {
      std::sort(list.begin(), list.end(),
                [](auto* a, auto* b) { return a->complete_ns < b->complete_ns; });
    }
    std::vector<const FencedReadOp*> reads;
    for (const FencedReadOp& op : h_.reads) {
      if (op.outcome == Outcome::kOk) reads.push_back(&op);
    }
    std::sort(reads.begin(), reads.end(),
              [](auto* a, auto* b) { return a->invoke_ns < b->invoke_ns; });
    std::map<std::string, size_t> next;             // by resource
    std::map<std::string, const WriteOp*> largest;  // by resource
    for (const FencedReadOp* read : reads) {
      const std::vector<const WriteOp*>& list = writes[read->resource];
      size_t& i = next[read->resource];
      const WriteOp*& best = largest[read->resource];
      for (; i < list.size() && list[i]->complete_ns < read->invoke_ns; ++i) {
        if (best == nullptr || list[i]->value > best->value) best = list[i];
      }
      if (best == nullptr || read->value >= best->value) continue;
      Report(kReadsSeeNoOverwrittenValue, read->resource,
             absl::StrCat(
                 "resource '", read->resource, "': ",
                 Describe(*read, absl::StrCat(LeaseModeName(read->mode), " fenced read"),
                          read->token),
                 " returned ", read->value, ", but ",
                 Describe(*best, absl::StrCat("write of ", best->log_id), best->token),
                 " had stored ", best->value, " before it was sent"));
    }
  }

  // shared-read-sees-no-newer-write: an accepted read with a shared token t
  // returns no value a write with a token above t stored. Such a writer was
  // granted after the reader's lease ended (no exclusive lease overlaps a
  // shared one): the reader paused past its lease, and the gateway must
  // have refused it (its fence was at least the writer's token).
  void CheckSharedReads() {
    // By resource and value: the smallest token of an applied write of it.
    std::map<std::pair<std::string, uint64_t>, const WriteOp*> writer;
    for (const WriteOp& op : h_.writes) {
      const bool applied = op.outcome == Outcome::kOk ||
                           (op.outcome == Outcome::kUnknown && InFinalLog(op));
      if (!applied) continue;
      const WriteOp*& w = writer[{op.resource, op.value}];
      if (w == nullptr || op.token < w->token) w = &op;
    }
    for (const FencedReadOp& read : h_.reads) {
      if (read.outcome != Outcome::kOk || read.mode != LeaseMode::kShared) continue;
      auto it = writer.find({read.resource, read.value});
      if (it == writer.end() || it->second->token <= read.token) continue;
      const WriteOp& w = *it->second;
      Report(kSharedReadSeesNoNewerWrite, read.resource,
             absl::StrCat("resource '", read.resource,
                          "': ", Describe(read, "shared fenced read", read.token),
                          " returned ", read.value, ", which ",
                          Describe(w, absl::StrCat("write of ", w.log_id), w.token),
                          " stored: a writer that came after the reader's lease, whose "
                          "read should have been refused"));
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
      if (op.outcome == Outcome::kOk && !op.gateway.empty() &&
          op.mode == LeaseMode::kExclusive) {  // a shared read moves no fence
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
      // Only an exclusive grant moves a fence position.
      if (op.outcome != Outcome::kOk || op.mode != LeaseMode::kExclusive) continue;
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
