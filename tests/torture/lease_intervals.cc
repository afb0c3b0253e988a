#include "tests/torture/lease_intervals.h"

#include <map>

namespace fencegate::torture {

std::vector<LeaseInterval> BuildLeaseIntervals(const std::vector<LeaseEvent>& events,
                                               const std::vector<AcquireOp>& acquires) {
  using Key = std::pair<std::string, uint64_t>;
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
    lease.start_ns = event.time_ns;
    lease.ttl_ms = event.ttl_ms;
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

  // A dropped lease someone was told they hold was forgotten: it should have
  // been held until a full TTL after the restart.
  std::map<Key, std::vector<size_t>> by_key;  // in start order
  for (size_t i = 0; i < intervals.size(); ++i) {
    by_key[{intervals[i].resource, intervals[i].token}].push_back(i);
  }
  for (const AcquireOp& op : acquires) {
    if (op.outcome != Outcome::kOk) continue;
    LeaseInterval* source = nullptr;  // the latest that began before the reply
    for (size_t i : by_key[{op.resource, op.token}]) {
      if (intervals[i].start_ns <= op.complete_ns) source = &intervals[i];
    }
    if (source != nullptr && source->dropped_at_ns != 0 && !source->forgotten) {
      source->forgotten = true;
      source->end_ns = source->dropped_at_ns + source->ttl_ms * 1000000;
    }
  }
  return intervals;
}

}  // namespace fencegate::torture
