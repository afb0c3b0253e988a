#include "tests/unit/lock_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fencegate::lockservice {
namespace {

using Kind = Expected::Kind;

bool Contains(const std::deque<std::string>& ids, const std::string& id) {
  return !id.empty() && std::find(ids.begin(), ids.end(), id) != ids.end();
}

// "EXCLUSIVE", "SHARED", "PERMIT": as the protocol spells them.
std::string ModeText(LeaseMode mode) {
  return absl::AsciiStrToUpper(LeaseModeName(mode));
}

}  // namespace

std::string MsText(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
}

std::string ReplyText(Kind kind, uint64_t token, uint32_t holds, absl::Duration ttl,
                      LeaseMode mode) {
  switch (kind) {
    case Kind::kAcquired:
      return absl::StrCat("acquired ", ModeText(mode), " token ", token, " holds ", holds,
                          " ttl ", MsText(ttl));
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
    case Kind::kInvalidArgument:
      return InvalidArgumentText("?");
  }
  return "?";
}

std::string InvalidArgumentText(absl::string_view field) {
  return absl::StrCat("INVALID_ARGUMENT naming ", field);
}

std::string ResourceText(const ResourceInfo& info) {
  std::string out = info.held ? absl::StrCat("held by ", info.holder, " token ", info.token,
                                             " holds ", info.hold_count, " for ",
                                             MsText(info.remaining))
                              : "free";
  absl::StrAppend(&out, ", ", ModeText(info.mode));
  if (info.permits != 0) absl::StrAppend(&out, " of ", info.permits);
  absl::StrAppend(&out, ", ", info.holders, " holders, ", info.waiters, " waiting");
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

// ------------------------------------------------------------ Kinds of lease

bool LockModel::InUse(const Resource& r) {
  return r.lease || !r.shared.empty() || !r.waiters.empty();
}

uint32_t LockModel::Semaphore(const Resource& r) { return InUse(r) ? r.permits : 0; }

std::string LockModel::KindError(const AcquireArgs& args, const Resource& r) const {
  if (args.mode == LeaseMode::kPermit) {
    if (args.permits < 1 || args.permits > limits_.max_holders_per_resource) {
      return "permits";
    }
  } else if (args.permits != 0) {
    return "permits";
  }
  const uint32_t semaphore = Semaphore(r);
  if (args.mode != LeaseMode::kPermit) return semaphore != 0 ? "mode" : "";
  if (semaphore != 0) return semaphore != args.permits ? "permits" : "";
  return InUse(r) ? "mode" : "";  // a read-write lock in use
}

bool LockModel::CanGrant(const Resource& r, const std::string& holder,
                         LeaseMode mode) const {
  switch (mode) {
    case LeaseMode::kExclusive:
      return !r.lease && r.shared.empty();
    case LeaseMode::kShared:
      return (!r.lease || r.lease->holder == holder) &&
             r.shared.size() < limits_.max_holders_per_resource;
    case LeaseMode::kPermit:
      return r.shared.size() < r.permits;
  }
  return false;
}

LockModel::Lease* LockModel::Reentrant(Resource& r, const std::string& holder,
                                       LeaseMode mode) {
  if (mode == LeaseMode::kExclusive) {
    return r.lease && r.lease->holder == holder ? &*r.lease : nullptr;
  }
  for (Lease& lease : r.shared) {
    if (lease.holder == holder) return &lease;
  }
  return nullptr;
}

bool LockModel::Downgrade(const Resource& r, const std::string& holder,
                          LeaseMode mode) const {
  return mode == LeaseMode::kShared && r.lease && r.lease->holder == holder &&
         CanGrant(r, holder, mode);
}

const LockModel::Lease* LockModel::Oldest(const Resource& r) {
  if (r.lease) return &*r.lease;
  return r.shared.empty() ? nullptr : &r.shared.front();
}

LockModel::Lease* LockModel::FindLease(Resource& r, uint64_t token) const {
  if (r.lease && TokenOf(r.lease->grant) == token) return &*r.lease;
  for (Lease& lease : r.shared) {
    if (TokenOf(lease.grant) == token) return &lease;
  }
  return nullptr;
}

// ------------------------------------------------------------ Grants

Expected LockModel::NotAcquired(int call, const Resource& r) const {
  Expected e{call, Kind::kNotAcquired};
  if (const Lease* oldest = Oldest(r)) {
    e.grant = oldest->grant;
    e.ttl = oldest->expiry - now_;
  }
  return e;
}

void LockModel::Grant(Resource& r, const std::string& holder, LeaseMode mode,
                      absl::Duration ttl, const std::string& request_id, int call) {
  Lease lease{holder, next_grant_++, mode, 1, ttl, now_ + ttl, {}};
  Remember(lease, request_id);
  const Lease& granted = mode == LeaseMode::kExclusive
                             ? r.lease.emplace(std::move(lease))
                             : r.shared.emplace_back(std::move(lease));
  Expected e{call, Kind::kAcquired, granted.grant, /*new_grant=*/true, 1, ttl};
  e.mode = mode;
  Expect(std::move(e));
}

void LockModel::Reenter(Lease& lease, int call, absl::Duration ttl,
                        const std::string& request_id) {
  // Same token, one more hold, unless it is a retry.
  if (!Contains(lease.request_ids, request_id)) {
    ++lease.holds;
    Remember(lease, request_id);
    lease.expiry = std::max(lease.expiry, now_ + ttl);
    lease.ttl = std::max(lease.ttl, ttl);
  }
  Expected e{call, Kind::kAcquired, lease.grant, false, lease.holds, lease.expiry - now_};
  e.mode = lease.mode;
  Expect(std::move(e));
}

void LockModel::GrantWaiters(Resource& r) {
  // A detached head keeps its turn until its client comes back; an
  // exclusive head that does not fit holds back everyone behind it.
  while (!r.waiters.empty()) {
    const Waiter& head = r.waiters.front();
    if (head.call == 0 || !CanGrant(r, head.holder, head.mode)) break;
    const Waiter next = std::move(r.waiters.front());
    r.waiters.pop_front();
    if (Lease* held = Reentrant(r, next.holder, next.mode)) {
      Reenter(*held, next.call, next.ttl, next.request_id);
    } else {
      Grant(r, next.holder, next.mode, next.ttl, next.request_id, next.call);
    }
    GrantHolderWaiters(r, next.holder);
  }
  // Loaded leases may have holders whose parked calls were never served.
  if (r.lease) GrantHolderWaiters(r, r.lease->holder);
}

void LockModel::GrantHolderWaiters(Resource& r, const std::string& holder_name) {
  const std::string holder = holder_name;  // it may live in a lease that goes
  for (auto w = r.waiters.begin(); w != r.waiters.end();) {
    if (w->call == 0 || w->holder != holder) {
      ++w;
      continue;
    }
    Lease* held = Reentrant(r, holder, w->mode);
    if (held == nullptr && !Downgrade(r, holder, w->mode)) {
      ++w;
      continue;
    }
    const Waiter mine = std::move(*w);
    w = r.waiters.erase(w);
    if (held != nullptr) {
      Reenter(*held, mine.call, mine.ttl, mine.request_id);
    } else {
      Grant(r, holder, LeaseMode::kShared, mine.ttl, mine.request_id, mine.call);
    }
  }
}

LockModel::Lease* LockModel::ByGrant(Resource& r, int grant) {
  if (r.lease && r.lease->grant == grant) return &*r.lease;
  for (Lease& lease : r.shared) {
    if (lease.grant == grant) return &lease;
  }
  return nullptr;
}

void LockModel::EndLease(Resource& r, int grant) {
  if (r.lease && r.lease->grant == grant) {
    r.lease.reset();
  } else {
    r.shared.erase(std::remove_if(r.shared.begin(), r.shared.end(),
                                  [grant](const Lease& l) { return l.grant == grant; }),
                   r.shared.end());
  }
  GrantWaiters(r);
}

// ------------------------------------------------------------ The calls

void LockModel::Acquire(int call, const AcquireArgs& args) {
  Resource& r = resources_[args.resource];
  if (!InUse(r)) r.permits = 0;  // forgotten: the next Acquire decides again
  if (std::string field = KindError(args, r); !field.empty()) {
    Expected e{call, Kind::kInvalidArgument};
    e.field = std::move(field);
    Expect(std::move(e));
    return;
  }
  const std::string& id = args.request_id;
  Lease* held = Reentrant(r, args.holder, args.mode);
  if (held != nullptr || Downgrade(r, args.holder, args.mode)) {
    // A retry of the holder's queued call (detached) is answered here, and
    // its place goes.
    for (auto w = r.waiters.begin(); !id.empty() && w != r.waiters.end(); ++w) {
      if (w->holder != args.holder || w->request_id != id) continue;
      if (w->call != 0) Expect({w->call, Kind::kCancelled});
      r.waiters.erase(w);
      break;
    }
    if (held != nullptr) {
      Reenter(*held, call, args.ttl, id);
    } else {
      Grant(r, args.holder, LeaseMode::kShared, args.ttl, id, call);
    }
    GrantWaiters(r);  // the queued call answered here may have held others back
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
  if (args.mode == LeaseMode::kPermit) r.permits = args.permits;
  if (r.waiters.empty() && CanGrant(r, args.holder, args.mode)) {
    Grant(r, args.holder, args.mode, args.ttl, id, call);
  } else if (args.wait == absl::ZeroDuration()) {
    Expect(NotAcquired(call, r));
  } else {
    Waiter w{call, args.holder, args.ttl, id, now_ + args.wait};
    w.mode = args.mode;
    w.permits = args.permits;
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
      GrantWaiters(r);  // it may have held back readers behind it
      return;
    }
  }
}

void LockModel::Renew(int call, const std::string& resource, uint64_t token,
                      absl::Duration ttl) {
  Resource& r = resources_[resource];
  Lease* lease = FindLease(r, token);
  if (lease == nullptr) {
    const Lease* oldest = Oldest(r);
    Expect({call, Kind::kLeaseLost, oldest != nullptr ? oldest->grant : 0});
    return;
  }
  lease->expiry = now_ + ttl;  // extend to, not by
  lease->ttl = std::max(lease->ttl, ttl);
  Expect({call, Kind::kRenewed, lease->grant, false, 0, ttl});
}

void LockModel::Release(int call, const std::string& resource, uint64_t token,
                        const std::string& request_id) {
  Resource& r = resources_[resource];
  Lease* lease = FindLease(r, token);
  if (lease == nullptr) {
    const Lease* oldest = Oldest(r);
    Expect({call, Kind::kLeaseLost, oldest != nullptr ? oldest->grant : 0});
    return;
  }
  if (!Contains(lease->request_ids, request_id)) {
    --lease->holds;
    Remember(*lease, request_id);
  }
  const uint32_t left = lease->holds;
  if (left == 0) EndLease(r, lease->grant);
  Expect({call, Kind::kReleased, 0, false, left});
}

void LockModel::AdvanceTo(absl::Time target) {
  for (;;) {
    absl::Time next = absl::InfiniteFuture();
    for (const auto& [name, r] : resources_) {
      if (r.lease) next = std::min(next, r.lease->expiry);
      for (const Lease& lease : r.shared) next = std::min(next, lease.expiry);
      for (const Waiter& w : r.waiters) {
        if (w.call != 0) next = std::min(next, w.deadline);
      }
    }
    for (absl::Time t : drop_timers_) next = std::min(next, t);
    if (next > target) break;
    now_ = next;
    for (auto& [name, r] : resources_) {
      // Expired: each ends on its own, in token order, and the queue is
      // served after each.
      std::vector<int> due;
      if (r.lease && r.lease->expiry == now_) due.push_back(r.lease->grant);
      for (const Lease& lease : r.shared) {
        if (lease.expiry == now_) due.push_back(lease.grant);
      }
      std::sort(due.begin(), due.end());
      for (int grant : due) {
        // A reentrant grant to a parked call of its holder may have moved
        // it on.
        const Lease* lease = ByGrant(r, grant);
        if (lease != nullptr && lease->expiry == now_) EndLease(r, grant);
      }
    }
    const auto dropped = std::remove(drop_timers_.begin(), drop_timers_.end(), now_);
    if (dropped != drop_timers_.end()) {
      drop_timers_.erase(dropped, drop_timers_.end());
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
        // It may have held back readers behind it; serving the queue may
        // take waiters out: look again from the head.
        GrantWaiters(r);
        w = r.waiters.begin();
      }
    }
  }
  now_ = target;
}

// ------------------------------------------------------------ Durability

void LockModel::CommitStep() {
  stored_ = Stored();
  for (const auto& [name, r] : resources_) {
    if (r.lease) stored_.leases[name] = *r.lease;
    for (const Lease& lease : r.shared) {
      stored_.holds[lease.grant] = StoredHold{name, lease, Semaphore(r)};
    }
    for (const Waiter& w : r.waiters) {
      if (w.persisted) stored_.rows[w.seq] = {name, w};
    }
  }
  parked_this_step_.clear();
}

void LockModel::FailStep() {
  for (Expected& e : expected_) {
    if (e.kind != Kind::kInvalidArgument) e.kind = Kind::kUnavailable;
  }
  for (auto& [name, r] : resources_) {
    r.lease.reset();
    r.shared.clear();
    if (r.waiters.empty()) r.permits = 0;
    for (Waiter& w : r.waiters) {
      if (std::count(parked_this_step_.begin(), parked_this_step_.end(), w.seq) > 0) {
        w.persisted = false;  // its row was in the failed commit
      }
    }
  }
  RestoreLeases();
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
  RestoreLeases();
  Reload();
  CommitStep();
}

void LockModel::RestoreLeases() {
  // The "delay restart" rule: each held for its full TTL from now.
  for (const auto& [name, lease] : stored_.leases) {
    Lease& restored = resources_[name].lease.emplace(lease);
    restored.expiry = now_ + lease.ttl;
  }
  for (const auto& [grant, hold] : stored_.holds) {
    Resource& r = resources_[hold.resource];
    Lease& restored = r.shared.emplace_back(hold.lease);
    restored.expiry = now_ + hold.lease.ttl;
    if (hold.permits != 0) r.permits = hold.permits;
  }
}

void LockModel::Reload() {
  bool detached = false;
  for (const auto& row : stored_.rows) {
    const uint64_t seq = row.first;
    const std::string& resource = row.second.first;
    const Waiter& stored = row.second.second;
    next_seq_ = std::max(next_seq_, seq + 1);
    Resource& r = resources_[resource];
    std::list<Waiter>& queue = r.waiters;
    const bool parked = std::any_of(queue.begin(), queue.end(), [&](const Waiter& w) {
      return w.holder == stored.holder && w.request_id == stored.request_id;
    });
    if (parked) continue;
    auto place = std::find_if(queue.begin(), queue.end(),
                              [&](const Waiter& w) { return w.seq > seq; });
    if (stored.mode == LeaseMode::kPermit) r.permits = stored.permits;
    Waiter w = stored;
    w.call = 0;
    queue.insert(place, std::move(w));
    detached = true;
  }
  if (detached) drop_timers_.push_back(now_ + limits_.waiter_reattach_grace);
  for (auto& [name, r] : resources_) GrantWaiters(r);
}

std::vector<Expected> LockModel::TakeExpected() { return std::exchange(expected_, {}); }

// ------------------------------------------------------------ What it shows

ResourceInfo LockModel::Describe(const std::string& resource) const {
  ResourceInfo info;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return info;
  const Resource& r = it->second;
  info.waiters = static_cast<uint32_t>(r.waiters.size());
  if (const uint32_t permits = Semaphore(r); permits != 0) {
    info.mode = LeaseMode::kPermit;
    info.permits = permits;
  } else if (!r.shared.empty()) {
    info.mode = LeaseMode::kShared;
  }
  info.holders = static_cast<uint32_t>(r.shared.size() + (r.lease ? 1 : 0));
  if (const Lease* lease = Oldest(r)) {
    info.held = true;
    info.holder = lease->holder;
    info.token = TokenOf(lease->grant);
    info.remaining = lease->expiry - now_;
    info.hold_count = lease->holds;
  }
  return info;
}

std::vector<LockModel::Holding> LockModel::Holdings(const std::string& resource) const {
  std::vector<Holding> out;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return out;
  const auto add = [&](const Lease& lease) {
    out.push_back(Holding{lease.holder, TokenOf(lease.grant), lease.mode,
                          lease.expiry - now_, lease.request_ids});
  };
  if (it->second.lease) add(*it->second.lease);
  for (const Lease& lease : it->second.shared) add(lease);
  return out;
}

std::vector<LockModel::Parked> LockModel::Queue(const std::string& resource) const {
  std::vector<Parked> out;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return out;
  for (const Waiter& w : it->second.waiters) {
    out.push_back(Parked{w.call, w.holder, w.request_id, w.mode, w.permits});
  }
  return out;
}

bool LockModel::HasOtherKinds() const {
  const auto other = [](LeaseMode mode) { return mode != LeaseMode::kExclusive; };
  for (const auto& [name, r] : resources_) {
    if (!r.shared.empty()) return true;
    for (const Waiter& w : r.waiters) {
      if (other(w.mode)) return true;
    }
  }
  if (!stored_.holds.empty()) return true;
  for (const auto& [seq, row] : stored_.rows) {
    if (other(row.second.mode)) return true;
  }
  return false;
}

}  // namespace fencegate::lockservice
