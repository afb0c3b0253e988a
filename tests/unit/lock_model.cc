#include "tests/unit/lock_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate::lockservice {
namespace {

using Kind = Expected::Kind;

bool Contains(const std::deque<std::string>& ids, const std::string& id) {
  return !id.empty() && std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::string MsText(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
}

std::string ReplyText(Kind kind, uint64_t token, uint32_t holds, absl::Duration ttl) {
  switch (kind) {
    case Kind::kAcquired:
      return absl::StrCat("acquired token ", token, " holds ", holds, " ttl ", MsText(ttl));
    case Kind::kNotAcquired:
      return absl::StrCat("not acquired, held by token ", token, ", retry after ",
                          MsText(ttl));
    case Kind::kRenewed:
      return absl::StrCat("renewed for ", MsText(ttl));
    case Kind::kReleased:
      return absl::StrCat("released, holds left ", holds);
    case Kind::kLeaseLost:
      return absl::StrCat("ABORTED lease lost, current token ", token);
    case Kind::kCancelled:
      return "CANCELLED";
    case Kind::kUnavailable:
      return "UNAVAILABLE";
  }
  return "?";
}

std::string ResourceText(const ResourceInfo& info) {
  std::string out = info.held ? absl::StrCat("held by ", info.holder, " token ", info.token,
                                             " holds ", info.hold_count, " for ",
                                             MsText(info.remaining))
                              : "free";
  absl::StrAppend(&out, ", ", info.waiters, " waiting");
  if (info.lock_delay_remaining != absl::ZeroDuration()) absl::StrAppend(&out, ", delayed");
  return out;
}

void LockModel::Expect(Expected e) {
  e.at = now_;
  expected_.push_back(e);
}

uint64_t LockModel::TokenOf(int grant) const {
  auto it = tokens_.find(grant);
  return it == tokens_.end() ? 0 : it->second;
}

void LockModel::Remember(Lease& lease, const std::string& request_id) const {
  if (request_id.empty()) return;
  lease.request_ids.push_back(request_id);
  while (lease.request_ids.size() > limits_.remembered_request_ids) {
    lease.request_ids.pop_front();
  }
}

Expected LockModel::NotAcquired(int call, const Resource& r) const {
  Expected e{call, Kind::kNotAcquired};
  if (r.lease) {
    e.grant = r.lease->grant;
    e.ttl = r.lease->expiry - now_;
  }
  return e;
}

void LockModel::Grant(Resource& r, const std::string& holder, absl::Duration ttl,
                      const std::string& request_id, int call) {
  Lease lease{holder, next_grant_++, 1, ttl, now_ + ttl, {}};
  Remember(lease, request_id);
  r.lease = std::move(lease);
  Expect({call, Kind::kAcquired, r.lease->grant, /*new_grant=*/true, 1, ttl});
}

void LockModel::Reenter(Resource& r, int call, absl::Duration ttl,
                        const std::string& request_id) {
  // Same token, one more hold, unless it is a retry.
  Lease& lease = *r.lease;
  if (!Contains(lease.request_ids, request_id)) {
    ++lease.holds;
    Remember(lease, request_id);
    lease.expiry = std::max(lease.expiry, now_ + ttl);
    lease.ttl = std::max(lease.ttl, ttl);
  }
  Expect({call, Kind::kAcquired, lease.grant, false, lease.holds, lease.expiry - now_});
}

void LockModel::GrantWaiters(Resource& r) {
  if (!r.lease) {
    // A detached head keeps its turn until its client comes back.
    if (r.waiters.empty() || r.waiters.front().call == 0) return;
    Waiter next = std::move(r.waiters.front());
    r.waiters.pop_front();
    Grant(r, next.holder, next.ttl, next.request_id, next.call);
  }
  // The holder's parked calls are reentrant acquires, granted at once.
  for (auto w = r.waiters.begin(); w != r.waiters.end();) {
    if (w->call == 0 || w->holder != r.lease->holder) {
      ++w;
      continue;
    }
    const Waiter mine = std::move(*w);
    w = r.waiters.erase(w);
    Reenter(r, mine.call, mine.ttl, mine.request_id);
  }
}

void LockModel::Acquire(int call, const AcquireArgs& args) {
  Resource& r = resources_[args.resource];
  const std::string& id = args.request_id;
  if (r.lease && r.lease->holder == args.holder) {
    // A retry of the holder's queued call (detached) is answered here, and
    // its place goes.
    for (auto w = r.waiters.begin(); !id.empty() && w != r.waiters.end(); ++w) {
      if (w->holder != args.holder || w->request_id != id) continue;
      if (w->call != 0) Expect({w->call, Kind::kCancelled});
      r.waiters.erase(w);
      break;
    }
    Reenter(r, call, args.ttl, id);
    return;
  }
  if (!id.empty()) {
    for (Waiter& w : r.waiters) {
      if (w.holder != args.holder || w.request_id != id) continue;
      // A retry takes the parked (or detached) waiter's place over.
      if (w.call != 0) Expect({w.call, Kind::kCancelled});
      w.call = call;
      w.ttl = args.ttl;
      w.deadline = now_ + args.wait;
      GrantWaiters(r);
      return;
    }
  }
  if (!r.lease && r.waiters.empty()) {
    Grant(r, args.holder, args.ttl, id, call);
  } else if (args.wait == absl::ZeroDuration()) {
    Expect(NotAcquired(call, r));
  } else {
    Waiter w{call, args.holder, args.ttl, id, now_ + args.wait};
    if (!id.empty()) {
      w.seq = next_seq_++;
      w.persisted = true;
      parked_this_step_.push_back(w.seq);
    }
    r.waiters.push_back(std::move(w));
  }
}

void LockModel::Cancel(int call) {
  for (auto& [name, r] : resources_) {
    for (auto w = r.waiters.begin(); w != r.waiters.end(); ++w) {
      if (w->call != call) continue;
      r.waiters.erase(w);
      Expect({call, Kind::kCancelled});
      return;
    }
  }
}

void LockModel::Renew(int call, const std::string& resource, uint64_t token,
                      absl::Duration ttl) {
  Resource& r = resources_[resource];
  if (!r.lease || TokenOf(r.lease->grant) != token) {
    Expect({call, Kind::kLeaseLost, r.lease ? r.lease->grant : 0});
    return;
  }
  r.lease->expiry = now_ + ttl;  // extend to, not by
  r.lease->ttl = std::max(r.lease->ttl, ttl);
  Expect({call, Kind::kRenewed, r.lease->grant, false, 0, ttl});
}

void LockModel::Release(int call, const std::string& resource, uint64_t token,
                        const std::string& request_id) {
  Resource& r = resources_[resource];
  if (!r.lease || TokenOf(r.lease->grant) != token) {
    Expect({call, Kind::kLeaseLost, r.lease ? r.lease->grant : 0});
    return;
  }
  if (!Contains(r.lease->request_ids, request_id)) {
    --r.lease->holds;
    Remember(*r.lease, request_id);
  }
  const uint32_t left = r.lease->holds;
  if (left == 0) {
    r.lease.reset();
    GrantWaiters(r);
  }
  Expect({call, Kind::kReleased, 0, false, left});
}

void LockModel::AdvanceTo(absl::Time target) {
  for (;;) {
    absl::Time next = absl::InfiniteFuture();
    for (const auto& [name, r] : resources_) {
      if (r.lease) next = std::min(next, r.lease->expiry);
      for (const Waiter& w : r.waiters) {
        if (w.call != 0) next = std::min(next, w.deadline);
      }
    }
    for (absl::Time t : drop_timers_) next = std::min(next, t);
    if (next > target) break;
    now_ = next;
    for (auto& [name, r] : resources_) {
      if (!r.lease || r.lease->expiry != now_) continue;
      r.lease.reset();  // expired: the next waiter gets it at once
      GrantWaiters(r);
    }
    const auto due = std::remove(drop_timers_.begin(), drop_timers_.end(), now_);
    if (due != drop_timers_.end()) {
      drop_timers_.erase(due, drop_timers_.end());
      for (auto& [name, r] : resources_) {
        const size_t before = r.waiters.size();
        r.waiters.remove_if([](const Waiter& w) { return w.call == 0; });
        if (r.waiters.size() != before) GrantWaiters(r);
      }
    }
    for (auto& [name, r] : resources_) {
      for (auto w = r.waiters.begin(); w != r.waiters.end();) {
        if (w->call == 0 || w->deadline != now_) {
          ++w;
          continue;
        }
        const int timed_out = w->call;
        w = r.waiters.erase(w);
        Expect(NotAcquired(timed_out, r));
      }
    }
  }
  now_ = target;
}

void LockModel::CommitStep() {
  stored_ = Stored();
  for (const auto& [name, r] : resources_) {
    if (r.lease) stored_.leases[name] = *r.lease;
    for (const Waiter& w : r.waiters) {
      if (w.persisted) stored_.rows[w.seq] = {name, w};
    }
  }
  parked_this_step_.clear();
}

void LockModel::FailStep() {
  for (Expected& e : expected_) e.kind = Kind::kUnavailable;
  for (auto& [name, r] : resources_) {
    r.lease.reset();
    for (Waiter& w : r.waiters) {
      if (std::count(parked_this_step_.begin(), parked_this_step_.end(), w.seq) > 0) {
        w.persisted = false;  // its row was in the failed commit
      }
    }
  }
  for (const auto& [name, lease] : stored_.leases) {
    resources_[name].lease = lease;
    resources_[name].lease->expiry = now_ + lease.ttl;
  }
  Reload();
  CommitStep();
}

void LockModel::Crash() {
  for (auto& [name, r] : resources_) {
    for (const Waiter& w : r.waiters) {
      if (w.call != 0) Expect({w.call, Kind::kUnavailable});  // Shutdown()
    }
  }
  resources_.clear();
  drop_timers_.clear();
  next_seq_ = 1;
  for (const auto& [name, lease] : stored_.leases) {
    resources_[name].lease = lease;
    resources_[name].lease->expiry = now_ + lease.ttl;  // the "delay restart" rule
  }
  Reload();
  CommitStep();
}

void LockModel::Reload() {
  bool detached = false;
  for (const auto& row : stored_.rows) {
    const uint64_t seq = row.first;
    const std::string& resource = row.second.first;
    const Waiter& stored = row.second.second;
    next_seq_ = std::max(next_seq_, seq + 1);
    std::list<Waiter>& queue = resources_[resource].waiters;
    const bool parked = std::any_of(queue.begin(), queue.end(), [&](const Waiter& w) {
      return w.holder == stored.holder && w.request_id == stored.request_id;
    });
    if (parked) continue;
    auto place = std::find_if(queue.begin(), queue.end(),
                              [&](const Waiter& w) { return w.seq > seq; });
    Waiter w = stored;
    w.call = 0;
    queue.insert(place, std::move(w));
    detached = true;
  }
  if (detached) drop_timers_.push_back(now_ + limits_.waiter_reattach_grace);
  for (auto& [name, r] : resources_) GrantWaiters(r);
}

std::vector<Expected> LockModel::TakeExpected() { return std::exchange(expected_, {}); }

ResourceInfo LockModel::Describe(const std::string& resource) const {
  ResourceInfo info;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return info;
  if (const std::optional<Lease>& lease = it->second.lease) {
    info.held = true;
    info.holder = lease->holder;
    info.token = TokenOf(lease->grant);
    info.remaining = lease->expiry - now_;
    info.hold_count = lease->holds;
  }
  info.waiters = static_cast<uint32_t>(it->second.waiters.size());
  return info;
}

std::optional<LockModel::Holding> LockModel::HolderOf(const std::string& resource) const {
  auto it = resources_.find(resource);
  if (it == resources_.end() || !it->second.lease) return std::nullopt;
  const Lease& lease = *it->second.lease;
  return Holding{lease.holder, TokenOf(lease.grant), lease.request_ids};
}

std::vector<LockModel::Parked> LockModel::Queue(const std::string& resource) const {
  std::vector<Parked> out;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return out;
  for (const Waiter& w : it->second.waiters) {
    out.push_back(Parked{w.call, w.holder, w.request_id});
  }
  return out;
}

}  // namespace fencegate::lockservice
