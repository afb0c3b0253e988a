#include "tests/torture/lease_intervals.h"

#include <map>

namespace fencegate::torture {
namespace {

using Key = std::pair<std::string, uint64_t>;

// The events of the instance that owns the lease table at each moment (see
// the header), and the grants of deposed instances apart.
void SplitByOwner(const std::vector<LeaseEvent>& events, std::vector<LeaseEvent>* owned,
                  std::vector<LeaseEvent>* deposed_grants) {
  std::string owner;
  for (const LeaseEvent& event : events) {
    if (event.kind == LeaseEvent::Kind::kLoad) owner = event.instance;
    if (owner.empty() || event.instance == owner) {
      owned->push_back(event);
    } else if (event.kind == LeaseEvent::Kind::kGrant) {
      deposed_grants->push_back(event);
    }
  }
}

}  // namespace

std::vector<LeaseInterval> BuildLeaseIntervals(const std::vector<LeaseEvent>& all_events,
                                               const std::vector<AcquireOp>& acquires) {
  std::vector<LeaseEvent> events, deposed_grants;
  SplitByOwner(all_events, &events, &deposed_grants);
  std::vector<LeaseInterval> intervals;
  std::map<Key, size_t> open;     // held now
  std::map<Key, size_t> on_hold;  // held at the last load, not yet restored
  int64_t load_ns = 0;

  auto drop_unrestored = [&] {
    for (const auto& [key, index] : on_hold) {
      intervals[index].end_ns = load_ns;
      intervals[index].dropped_at_ns = load_ns;
    }
    on_hold.clear();
  };
  auto open_new = [&](const LeaseEvent& event) {
    LeaseInterval lease;
    lease.resource = event.resource;
    lease.token = event.token;
    lease.mode = event.mode;
    lease.holder = event.holder;
    lease.start_ns = event.time_ns;
    lease.ttl_ms = event.ttl_ms;
    lease.instance = event.instance;
    lease.granted = event.kind == LeaseEvent::Kind::kGrant;
    open[{event.resource, event.token}] = intervals.size();
    intervals.push_back(std::move(lease));
  };

  for (const LeaseEvent& event : events) {
    const Key key{event.resource, event.token};
    if (event.kind != LeaseEvent::Kind::kRestore) drop_unrestored();
    switch (event.kind) {
      case LeaseEvent::Kind::kLoad:
        load_ns = event.time_ns;
        on_hold.swap(open);
        break;
      case LeaseEvent::Kind::kRestore:
        if (auto it = on_hold.find(key); it != on_hold.end()) {
          open.insert(*it);  // the lease goes on over the restart
          on_hold.erase(it);
        } else {
          open_new(event);
        }
        break;
      case LeaseEvent::Kind::kGrant:
        open_new(event);
        break;
      case LeaseEvent::Kind::kRelease:
      case LeaseEvent::Kind::kExpire:
        if (auto it = open.find(key); it != open.end()) {
          intervals[it->second].end_ns = event.time_ns;
          open.erase(it);
        }
        break;
    }
  }
  drop_unrestored();

  // An acknowledgement belongs to the latest interval of its resource and
  // token that began before the reply; a dropped lease someone was told
  // they hold was forgotten: it should have been held until a full TTL
  // after the restart. Only an acknowledgement that no lease of the owner
  // accounts for makes a deposed instance's grant a lease.
  std::map<Key, std::vector<size_t>> by_key;  // in start order
  for (size_t i = 0; i < intervals.size(); ++i) {
    by_key[{intervals[i].resource, intervals[i].token}].push_back(i);
  }
  std::map<Key, std::vector<const LeaseEvent*>> deposed_by_key;  // in time order
  for (const LeaseEvent& grant : deposed_grants) {
    deposed_by_key[{grant.resource, grant.token}].push_back(&grant);
  }
  std::map<const LeaseEvent*, size_t> deposed_interval;
  for (const AcquireOp& op : acquires) {
    if (op.outcome != Outcome::kOk) continue;
    const Key key{op.resource, op.token};
    LeaseInterval* source = nullptr;  // the latest that began before the reply
    for (size_t i : by_key[key]) {
      if (intervals[i].start_ns <= op.complete_ns) source = &intervals[i];
    }
    if (source != nullptr) {
      source->acknowledged = true;
      if (source->dropped_at_ns != 0 && !source->forgotten) {
        source->forgotten = true;
        source->end_ns = source->dropped_at_ns + source->ttl_ms * 1000000;
      }
      continue;
    }
    const LeaseEvent* grant = nullptr;
    for (const LeaseEvent* g : deposed_by_key[key]) {
      if (g->time_ns <= op.complete_ns) grant = g;
    }
    if (grant == nullptr || deposed_interval.count(grant) > 0) continue;
    LeaseInterval lease;
    lease.resource = grant->resource;
    lease.token = grant->token;
    lease.mode = grant->mode;
    lease.holder = grant->holder;
    lease.start_ns = grant->time_ns;
    lease.end_ns = grant->time_ns + grant->ttl_ms * 1000000;
    lease.ttl_ms = grant->ttl_ms;
    lease.instance = grant->instance;
    lease.granted = true;
    lease.acknowledged = true;
    lease.deposed = true;
    deposed_interval[grant] = intervals.size();
    intervals.push_back(std::move(lease));
  }
  return intervals;
}

}  // namespace fencegate::torture
