// Builder: small synthetic torture histories (history.h) in a few lines,
// for the checker's tests. Times are in milliseconds.
//
// Thread safety: plain values.
#ifndef FENCEGATE_TESTS_TORTURE_HISTORY_BUILDER_H_
#define FENCEGATE_TESTS_TORTURE_HISTORY_BUILDER_H_

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "tests/torture/history.h"
#include "tests/torture/history_checker.h"

namespace fencegate::torture {

inline constexpr int64_t kMs = 1000000;  // ns

class Builder {
 public:
  Builder& Acquire(const std::string& who, const std::string& resource, uint64_t token,
                   int64_t invoke_ms, int64_t complete_ms, Outcome outcome = Outcome::kOk) {
    AcquireOp op;
    Fill(op, who, invoke_ms, complete_ms, outcome);
    op.resource = resource;
    op.token = token;
    h_.acquires.push_back(op);
    return *this;
  }
  Builder& Read(const std::string& who, const std::string& resource, uint64_t token,
                uint64_t value, int64_t invoke_ms, int64_t complete_ms,
                Outcome outcome = Outcome::kOk, uint64_t max_token = 0) {
    FencedReadOp op;
    Fill(op, who, invoke_ms, complete_ms, outcome);
    op.resource = resource;
    op.token = token;
    op.value = value;
    op.max_token = outcome == Outcome::kOk ? token : max_token;
    h_.reads.push_back(op);
    return *this;
  }
  // An increment to `value`, logged as `id`.
  Builder& Write(const std::string& who, const std::string& resource, uint64_t token,
                 uint64_t value, const std::string& id, int64_t invoke_ms,
                 int64_t complete_ms, Outcome outcome = Outcome::kOk,
                 uint64_t max_token = 0) {
    WriteOp op;
    Fill(op, who, invoke_ms, complete_ms, outcome);
    op.resource = resource;
    op.token = token;
    op.value = value;
    op.log_id = id;
    op.max_token = outcome == Outcome::kOk ? token : max_token;
    h_.writes.push_back(op);
    return *this;
  }
  Builder& Lease(LeaseEvent::Kind kind, int64_t at_ms, const std::string& resource = "",
                 uint64_t token = 0, int64_t ttl_ms = 1000) {
    return LeaseOn("lockservice", kind, at_ms, resource, token, ttl_ms);
  }
  // A lease event of instance `instance` of a replicated lock service
  // (events must be added in time order, as LoadRunDirectory merges them).
  Builder& LeaseOn(const std::string& instance, LeaseEvent::Kind kind, int64_t at_ms,
                   const std::string& resource = "", uint64_t token = 0,
                   int64_t ttl_ms = 1000) {
    LeaseEvent event;
    event.time_ns = at_ms * kMs;
    event.kind = kind;
    event.resource = resource;
    event.token = token;
    event.ttl_ms = ttl_ms;
    event.instance = instance;
    h_.lease_events.push_back(std::move(event));
    return *this;
  }
  // The last Acquire added was of this kind, by `holder`.
  Builder& AcquiredAs(LeaseMode mode, const std::string& holder, uint32_t permits = 0) {
    h_.acquires.back().mode = mode;
    h_.acquires.back().holder = holder;
    h_.acquires.back().permits = permits;
    return *this;
  }
  // The last Acquire added was a Campaign by `holder` saying `value`.
  Builder& CampaignedAs(const std::string& holder, const std::string& value) {
    h_.acquires.back().holder = holder;
    h_.acquires.back().campaign = true;
    h_.acquires.back().value = value;
    return *this;
  }
  Builder& Proclaim(const std::string& who, const std::string& election, uint64_t term,
                    const std::string& value, uint64_t seq, int64_t invoke_ms,
                    int64_t complete_ms, Outcome outcome = Outcome::kOk) {
    ProclaimOp op;
    Fill(op, who, invoke_ms, complete_ms, outcome);
    op.election = election;
    op.term = term;
    op.value = value;
    op.seq = outcome == Outcome::kOk ? seq : 0;
    h_.proclaims.push_back(op);
    return *this;
  }
  // Observer `who` was told that `candidate` leads `election` in `term`
  // saying `value` as its seq-th; an empty candidate: nobody leads.
  Builder& Seen(const std::string& who, const std::string& election, uint64_t term,
                uint64_t seq, const std::string& candidate = "",
                const std::string& value = "") {
    ObservedChange c;
    c.process = who;
    c.election = election;
    c.leader = !candidate.empty();
    c.term = term;
    c.seq = seq;
    c.candidate = candidate;
    c.value = value;
    h_.observed.push_back(c);
    return *this;
  }
  // The last read added was with a lease of this kind.
  Builder& ReadAs(LeaseMode mode) {
    h_.reads.back().mode = mode;
    return *this;
  }
  // The last lease event added was of a lease of this kind, held by `holder`.
  Builder& LeaseAs(LeaseMode mode, const std::string& holder = "") {
    h_.lease_events.back().mode = mode;
    h_.lease_events.back().holder = holder;
    return *this;
  }
  // The last read and write added went through `gateway`.
  Builder& Through(const std::string& gateway) {
    if (!h_.reads.empty()) h_.reads.back().gateway = gateway;
    if (!h_.writes.empty()) h_.writes.back().gateway = gateway;
    return *this;
  }
  // Grant-time fencing, and the fence of `resource` after the run.
  Builder& GrantTimeFencing(const std::string& resource = "", uint64_t fence = 0,
                            int64_t read_ms = 90000) {
    h_.grant_time_fencing = true;
    if (!resource.empty())
      h_.feed_fences[resource] = FeedFence{read_ms * kMs, fence, fence};
    return *this;
  }
  Builder& Final(const std::string& resource, uint64_t fence, uint64_t counter,
                 std::map<std::string, uint64_t> log, int64_t read_ms = 100000) {
    h_.final_state[resource] = FinalState{read_ms * kMs, fence, counter, std::move(log)};
    return *this;
  }
  const History& history() const { return h_; }
  // Lease events in time order, as LoadRunDirectory merges them.
  CheckResult Check() const {
    History h = h_;
    std::stable_sort(
        h.lease_events.begin(), h.lease_events.end(),
        [](const LeaseEvent& a, const LeaseEvent& b) { return a.time_ns < b.time_ns; });
    return CheckHistory(h);
  }

 private:
  static void Fill(Call& call, const std::string& who, int64_t invoke_ms,
                   int64_t complete_ms, Outcome outcome) {
    call.process = who;
    call.invoke_ns = invoke_ms * kMs;
    call.complete_ns = complete_ms == kNever ? kNever : complete_ms * kMs;
    call.outcome = outcome;
  }
  History h_;
};

using Kind = LeaseEvent::Kind;

inline std::string Report(const CheckResult& result) {
  std::string text;
  for (const Violation& v : result.violations) text += v.invariant + ": " + v.detail + "\n";
  return text;
}

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_HISTORY_BUILDER_H_
