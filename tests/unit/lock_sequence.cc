#include "tests/unit/lock_sequence.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"

namespace fencegate::lockservice {
namespace {

using Kind = Expected::Kind;
using ::absl::Milliseconds;
using ::fencegate::testing::Reply;

// Each sequence uses two resources of these: read-write locks "r0" and
// "r1", and a semaphore "s0" (in two sequences of three).
const std::vector<std::vector<std::string>> kResourcePairs = {
    {"r0", "r1"}, {"r0", "s0"}, {"s0", "r1"}};
// One more holder than a resource's shared leases may be (SequenceLimits).
const std::vector<std::string> kHolders = {"ann", "bob", "cat", "dan"};
// The 10 ms grid of lock_model.h: TTLs and advances on it, waits 5 ms off.
const std::vector<int> kTtlMs = {100, 200, 300, 500, 1000, 3000};
const std::vector<int> kWaitMs = {15, 155, 495, 1505, 4005};
const std::vector<int> kAdvanceMs = {10, 90, 100, 290, 500, 1000, 5000};

LockLimits SequenceLimits() {
  LockLimits limits;
  limits.waiter_reattach_grace = absl::Seconds(1);  // reached within a sequence
  limits.remembered_request_ids = 4;                // and forgetting old ids
  // Reached by shared leases (four holders); a semaphore of 4 is too large.
  limits.max_holders_per_resource = 3;
  return limits;
}

std::string Text(const absl::Status& s) {
  std::optional<ErrorInfo> info = GetErrorInfo(s);
  if (s.code() == absl::StatusCode::kAborted && info &&
      info->reason == ErrorReason::kLeaseLost) {
    return ReplyText(Kind::kLeaseLost, info->current_token);
  }
  if (s.code() == absl::StatusCode::kCancelled) return ReplyText(Kind::kCancelled);
  if (s.code() == absl::StatusCode::kUnavailable) return ReplyText(Kind::kUnavailable);
  if (s.code() == absl::StatusCode::kInvalidArgument && info &&
      info->reason == ErrorReason::kInvalidField) {
    return InvalidArgumentText(info->field);
  }
  return s.ToString();
}

std::string Text(const absl::StatusOr<AcquireResult>& r) {
  if (!r.ok()) return Text(r.status());
  if (r->acquired) {
    return ReplyText(Kind::kAcquired, r->token, r->hold_count, r->ttl, r->mode);
  }
  if (r->reason != NotAcquiredReason::kHeld) return "not acquired for a reason other than HELD";
  return ReplyText(Kind::kNotAcquired, r->holder_token, 0, r->retry_after);
}
std::string Text(const absl::StatusOr<RenewResult>& r) {
  return r.ok() ? ReplyText(Kind::kRenewed, 0, 0, r->ttl) : Text(r.status());
}
std::string Text(const absl::StatusOr<ReleaseResult>& r) {
  return r.ok() ? ReplyText(Kind::kReleased, 0, r->hold_count) : Text(r.status());
}

}  // namespace

LockSequence::LockSequence(uint64_t seed, LockSequenceOptions options)
    : options_(options),
      rng_(seed),
      resources_(rng_.Pick(kResourcePairs)),
      semaphore_size_(static_cast<uint32_t>(rng_.Between(2, 3))),
      limits_(SequenceLimits()),
      model_(limits_, clock_.Now()) {}

bool LockSequence::MayRestart() const {
  return options_.restart_with_other_kinds || !model_.HasOtherKinds();
}

absl::Status LockSequence::Open() {
  absl::StatusOr<std::unique_ptr<SqliteLockStore>> store =
      SqliteLockStore::Open(dir_.File("locks.db"));
  if (!store.ok()) return store.status();
  store_ = *std::move(store);
  faulty_ = std::make_unique<testing::FaultyLockStore>(store_.get());
  absl::StatusOr<std::unique_ptr<LockManager>> manager =
      LockManager::Create(faulty_.get(), &clock_, limits_);
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);
  return absl::OkStatus();
}

absl::Status LockSequence::Run() {
  if (absl::Status status = Open(); !status.ok()) return status;
  return testing::RunSteps(
      static_cast<int>(rng_.Between(6, 24)),
      [this](std::string& log) { return Step(log); },
      [this](std::string& log) {
        if (!MayRestart()) {
          log =
              "the end (no crash: shared leases or permits, and the store may not keep "
              "them)";
          return Check(log);
        }
        log = "crash and reopen (the end)";
        return Crash(log);
      });
}

absl::Status LockSequence::Step(std::string& log) {
  const int dice = static_cast<int>(rng_.Below(100));
  if (dice < 62) {
    const bool fail = rng_.Percent(8) && MayRestart();
    if (fail) faulty_->FailNthCommit(1);
    RandomCall(log);
    manager_->Sync();
    if (fail) {
      // Recovery runs after the failed batch; the second Sync waits for it.
      manager_->Sync();
      model_.FailStep();
      absl::StrAppend(&log, " [its commit fails]");
    } else {
      model_.CommitStep();
    }
    absl::Status status = Check(log);
    if (!status.ok() || !fail || !rng_.Percent(30) || !MayRestart()) return status;
    absl::StrAppend(&log, "; crash and reopen");
    return Crash(log);
  }
  if (dice < 68) {
    std::vector<int> parked;
    for (const std::string& name : resources_) {
      for (const LockModel::Parked& p : model_.Queue(name)) {
        if (p.call != 0) parked.push_back(p.call);
      }
    }
    if (!parked.empty()) {
      const int call = rng_.Pick(parked);
      log = absl::StrCat("call ", call, ": its client goes away");
      manager_->CancelAcquire(call_ids_[call]);
      model_.Cancel(call);
      manager_->Sync();
      model_.CommitStep();
      return Check(log);
    }
  }
  if (dice < 94 || !MayRestart()) {
    absl::Duration d = Milliseconds(rng_.Pick(kAdvanceMs));
    const std::vector<LockModel::Holding> held = model_.Holdings(rng_.Pick(resources_));
    if (!held.empty() && rng_.Percent(40)) {
      // Onto a lease's expiry, or just before it.
      d = rng_.Pick(held).remaining - Milliseconds(rng_.Percent(50) ? 0 : 10);
    }
    log = absl::StrCat("advance the clock ", MsText(d));
    clock_.AdvanceBy(d);
    model_.AdvanceTo(clock_.Now());
    manager_->Sync();
    model_.CommitStep();
    return Check(log);
  }
  log = "crash and reopen";
  return Crash(log);
}

void LockSequence::RandomKind(const std::string& resource, AcquireArgs& args) {
  const int dice = static_cast<int>(rng_.Below(100));
  args.mode = LeaseMode::kExclusive;
  args.permits = 0;
  if (resource[0] == 's') {
    if (dice < 92) {
      args.mode = LeaseMode::kPermit;
      // Now and then another size: 1..3 is refused while it is in use, 0
      // and 4 always (out of range).
      args.permits = dice < 86 ? semaphore_size_ : static_cast<uint32_t>(rng_.Below(5));
    } else if (dice < 96) {
      args.mode = LeaseMode::kShared;
    }  // else exclusive: the other way, refused while it is a semaphore
  } else if (dice < 55) {
    // exclusive
  } else if (dice < 94) {
    args.mode = LeaseMode::kShared;
  } else if (dice < 98) {
    args.mode = LeaseMode::kPermit;  // the other way, refused while in use
    args.permits = semaphore_size_;
  } else {
    args.mode = LeaseMode::kShared;
    args.permits = 1;  // permits without PERMIT
  }
}

void LockSequence::RandomCall(std::string& log) {
  const std::string& resource = rng_.Pick(resources_);
  const std::vector<LockModel::Holding> holdings = model_.Holdings(resource);
  const LockModel::Holding* held = holdings.empty() ? nullptr : &rng_.Pick(holdings);
  const absl::Duration ttl = Milliseconds(rng_.Pick(kTtlMs));
  const auto wait = [&] { return Milliseconds(rng_.Pick(kWaitMs)); };
  const auto fresh_id = [&](const char* prefix) {
    return absl::StrCat(prefix, next_request_id_++);
  };
  // Request ids this lease has seen, of acquires ("a") or releases ("l").
  const auto old_id = [&](char prefix) {
    std::vector<std::string> ids;
    if (held) {
      for (const std::string& id : held->request_ids) {
        if (id[0] == prefix) ids.push_back(id);
      }
    }
    return ids.empty() ? fresh_id(prefix == 'a' ? "a" : "l") : rng_.Pick(ids);
  };
  // The kind of `held`, as its holder asks for it again.
  const auto same_kind = [&](AcquireArgs& args) {
    args.mode = held->mode;
    args.permits =
        held->mode == LeaseMode::kPermit ? model_.Describe(resource).permits : 0;
  };
  switch (rng_.Below(8)) {
    case 0: {  // a retry of a parked call (or of a detached one)
      std::vector<LockModel::Parked> retriable;
      for (const LockModel::Parked& p : model_.Queue(resource)) {
        if (!p.request_id.empty()) retriable.push_back(p);
      }
      if (!retriable.empty()) {
        const LockModel::Parked& p = rng_.Pick(retriable);
        AcquireArgs args{resource, p.holder, ttl, wait(), p.request_id};
        args.mode = p.mode;
        args.permits = p.permits;
        return DoAcquire(args, log);
      }
      if (held) {  // a retry of the grant, or of a reentrant acquire
        AcquireArgs args{resource, held->holder, ttl, absl::ZeroDuration(), old_id('a')};
        same_kind(args);
        return DoAcquire(args, log);
      }
      [[fallthrough]];
    }
    case 1:
    case 2:
    case 3: {
      const bool again = held && rng_.Percent(30);
      AcquireArgs args{resource, again ? held->holder : rng_.Pick(kHolders), ttl,
                       rng_.Percent(50) ? absl::ZeroDuration() : wait(),
                       rng_.Percent(60) ? fresh_id("a") : ""};
      RandomKind(resource, args);
      if (again) {
        // The holder: mostly reentrant; else a downgrade, an upgrade that
        // queues, or the other way.
        if (rng_.Percent(60)) same_kind(args);
      } else if (args.mode != LeaseMode::kExclusive && rng_.Percent(70)) {
        // Mostly one more holder beside the others.
        std::vector<std::string> others;
        for (const std::string& holder : kHolders) {
          if (std::none_of(
                  holdings.begin(), holdings.end(),
                  [&](const LockModel::Holding& h) { return h.holder == holder; })) {
            others.push_back(holder);
          }
        }
        if (!others.empty()) args.holder = rng_.Pick(others);
      }
      return DoAcquire(args, log);
    }
    case 4:
    case 5:
      return DoRenew(resource,
                     held && rng_.Percent(75) ? held->token
                                              : SomeOtherToken(held ? held->token : 0),
                     ttl, log);
    default: {
      const uint64_t token =
          held && rng_.Percent(75) ? held->token : SomeOtherToken(held ? held->token : 0);
      const int id = static_cast<int>(rng_.Below(5));
      return DoRelease(resource, token, id < 2 ? fresh_id("l") : id < 3 ? old_id('l') : "",
                       log);
    }
  }
}

uint64_t LockSequence::SomeOtherToken(uint64_t current) {
  std::vector<uint64_t> tokens = {(uint64_t{1} << 40) + rng_.Below(1000)};  // never issued
  if (max_token_ > 0) tokens.push_back(static_cast<uint64_t>(rng_.Between(1, max_token_)));
  for (const std::string& name : resources_) {
    for (const LockModel::Holding& held : model_.Holdings(name)) {
      tokens.push_back(held.token);
    }
  }
  const uint64_t token = rng_.Pick(tokens);
  return token == current ? tokens[0] : token;
}

void LockSequence::DoAcquire(const AcquireArgs& args, std::string& log) {
  const int call = next_call_++;
  auto reply = std::make_shared<Reply<AcquireResult>>();
  pending_[call] = reply;
  call_ids_[call] = manager_->NewCallId();
  log = absl::StrCat("call ", call, ": acquire ", args.resource, " ",
                     LeaseModeName(args.mode));
  if (args.mode == LeaseMode::kPermit || args.permits != 0) {
    absl::StrAppend(&log, " of ", args.permits);
  }
  absl::StrAppend(&log, " as ", args.holder, " ttl ", MsText(args.ttl), " wait ",
                  MsText(args.wait), " request_id '", args.request_id, "'");
  model_.Acquire(call, args);
  manager_->Acquire(call_ids_[call], args,
                    [reply](absl::StatusOr<AcquireResult> r) { reply->Set(std::move(r)); });
}

void LockSequence::DoRenew(const std::string& resource, uint64_t token,
                           absl::Duration ttl, std::string& log) {
  const int call = next_call_++;
  auto reply = std::make_shared<Reply<RenewResult>>();
  pending_[call] = reply;
  log = absl::StrCat("call ", call, ": renew ", resource, " token ", token, " ttl ", MsText(ttl));
  model_.Renew(call, resource, token, ttl);
  manager_->Renew(RenewArgs{resource, token, ttl, ""},
                  [reply](absl::StatusOr<RenewResult> r) { reply->Set(std::move(r)); });
}

void LockSequence::DoRelease(const std::string& resource, uint64_t token,
                             const std::string& request_id, std::string& log) {
  const int call = next_call_++;
  auto reply = std::make_shared<Reply<ReleaseResult>>();
  pending_[call] = reply;
  log = absl::StrCat("call ", call, ": release ", resource, " token ", token,
                     " request_id '", request_id, "'");
  model_.Release(call, resource, token, request_id);
  manager_->Release(ReleaseArgs{resource, token, request_id, ""},
                    [reply](absl::StatusOr<ReleaseResult> r) { reply->Set(std::move(r)); });
}

absl::Status LockSequence::Crash(std::string& log) {
  manager_.reset();  // parked calls end; nothing is written on the way out
  faulty_.reset();
  store_.reset();
  model_.Crash();
  absl::Status status = Open();
  if (!status.ok()) return status;
  return Check(log);
}

absl::Status LockSequence::Check(std::string& log) {
  const std::vector<Expected> expected = model_.TakeExpected();
  // New tokens: each above every token revealed before this step, and
  // increasing with the instant of the grant within it.
  std::vector<std::pair<absl::Time, uint64_t>> fresh;
  for (const Expected& e : expected) {
    auto it = pending_.find(e.call);
    if (e.kind != Kind::kAcquired || !e.new_grant || it == pending_.end()) continue;
    absl::StatusOr<AcquireResult> r =
        std::get<testing::ReplyPtr<AcquireResult>>(it->second)->Get();
    if (!r.ok() || !r->acquired) continue;  // a mismatch, reported below
    if (r->token <= max_token_) {
      return absl::InternalError(absl::StrCat("call ", e.call, " was granted token ",
                                              r->token, ", not above token ", max_token_,
                                              " revealed before"));
    }
    for (const auto& [at, token] : fresh) {
      if (token == r->token || (at != e.at && (at < e.at) != (token < r->token))) {
        return absl::InternalError(absl::StrCat("call ", e.call, " was granted token ",
                                                r->token, " out of order with token ",
                                                token, " of the same step"));
      }
    }
    fresh.emplace_back(e.at, r->token);
    model_.LearnToken(e.grant, r->token);
  }
  for (const auto& [at, token] : fresh) max_token_ = std::max(max_token_, token);

  for (const Expected& e : expected) {
    auto it = pending_.find(e.call);
    if (it == pending_.end()) {
      return absl::InternalError(absl::StrCat("call ", e.call, " answered twice"));
    }
    const std::string got = std::visit(
        [](const auto& reply) {
          return reply->arrived() ? Text(reply->Get()) : std::string("(no reply yet)");
        },
        it->second);
    const uint64_t token = e.grant != 0 ? model_.TokenOf(e.grant) : 0;
    const std::string want = e.kind == Kind::kInvalidArgument
                                 ? InvalidArgumentText(e.field)
                                 : ReplyText(e.kind, token, e.hold_count, e.ttl, e.mode);
    absl::StrAppend(&log, "\n       -> call ", e.call, ": ", got);
    if (got != want) {
      return absl::InternalError(absl::StrCat("call ", e.call, " answered '", got,
                                              "'; the model expects '", want, "'"));
    }
    pending_.erase(it);
    call_ids_.erase(e.call);
  }
  for (const auto& [call, reply] : pending_) {
    if (std::visit([](const auto& r) { return r->arrived(); }, reply)) {
      return absl::InternalError(absl::StrCat("call ", call,
                                              " answered while the model has it parked"));
    }
  }
  for (const std::string& name : resources_) {
    auto reply = std::make_shared<Reply<ResourceInfo>>();
    manager_->Describe(name, [reply](absl::StatusOr<ResourceInfo> r) {
      reply->Set(std::move(r));
    });
    absl::StatusOr<ResourceInfo> info = reply->Wait();
    const std::string got = info.ok() ? ResourceText(*info) : info.status().ToString();
    const std::string want = ResourceText(model_.Describe(name));
    if (got != want) {
      return absl::InternalError(absl::StrCat("Describe(", name, ") says '", got,
                                              "'; the model says '", want, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
