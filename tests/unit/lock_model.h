// LockModel: the reference model of LockManager
// (lockservice/core/lock_manager.h) that the random-sequence test
// (lock_sequence_test.cc) checks it against. It is the contract written as
// plainly as possible: maps, lists and a clock, no threads, no store, no
// batching.
//
// Each call decides what LockManager must do and records the replies it
// must give (Expected). Tokens are the one thing it does not predict: a new
// grant's reply is only checked to carry a token larger than every token
// seen before; the test then tells the model the token (LearnToken), and
// from then on it is exact (Renew and Release are owner-checked by it,
// Describe must show it).
//
// Durability as the contract states it. Every step (one call, a clock
// advance, a crash) is one commit. CommitStep(): the step is durable.
// FailStep(): its commit failed, so every reply it produced is UNAVAILABLE
// and the state is the last committed one, each lease held for its full
// TTL from now (the manager's recovery). Crash(): the manager is gone and a
// new one loads the store: parked calls end (UNAVAILABLE), leases are held
// for their full TTL from now, and persisted waiters keep their places,
// detached until their clients retry or the reattach grace runs out.
//
// Kinds of lease (docs/design.md, "The lock manager"). A resource holds an
// exclusive lease, or shared leases, or permits of a semaphore of N; each
// lease has its own grant (token), expiry and holds. A request is granted at
// once when its kind fits and nobody waits; the queue is served from its
// head while its waiters fit, then each new holder's own parked calls that
// its leases let through (a reentrant acquire, a downgrade). An Acquire of
// the other way, or with permits out of range, is INVALID_ARGUMENT naming
// the field, as LockManager::ValidateAcquire and CheckKind decide. The
// model has no lock-delay (REQUIRES: limits.lock_delay is zero).
//
// Time. The test keeps the clock on multiples of 10 ms, lease TTLs too, and
// makes every wait end 5 ms off that grid, so no wait deadline falls on the
// instant a lease expires: whichever timer would run first would otherwise
// decide the outcome, and the model would have to know the timer queue.
//
// Thread safety: none; one test thread.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_MODEL_H_
#define FENCEGATE_TESTS_UNIT_LOCK_MODEL_H_

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::lockservice {

// A reply the model expects for the test's call `call`.
struct Expected {
  enum class Kind {
    kAcquired,     // grant: the lease `grant` of `mode`; new_grant: its token is new
    kNotAcquired,  // reason HELD; holder = `grant` (0: none), retry_after = ttl
    kRenewed,      // ttl
    kReleased,     // hold_count
    kLeaseLost,    // ABORTED, current token = that of `grant` (0: none)
    kCancelled,
    kUnavailable,
    kInvalidArgument,  // naming `field`; immediate, never part of a commit
  };
  int call = 0;
  Kind kind = Kind::kUnavailable;
  int grant = 0;  // the model's name of a lease; its token once learned
  bool new_grant = false;
  uint32_t hold_count = 0;
  // kAcquired, kRenewed: the lease's length; kNotAcquired: retry_after.
  absl::Duration ttl = absl::ZeroDuration();
  LeaseMode mode = LeaseMode::kExclusive;  // kAcquired
  std::string field = "";                  // kInvalidArgument: "mode" or "permits"
  absl::Time at = absl::InfinitePast();    // when decided (orders new tokens)
};

// Replies and resource states as text: the test writes down the model's
// expectations and the real answers with these, compares the texts and
// prints them on failure.
std::string MsText(absl::Duration d);  // "300ms"
std::string ReplyText(Expected::Kind kind, uint64_t token = 0, uint32_t holds = 0,
                      absl::Duration ttl = absl::ZeroDuration(),
                      LeaseMode mode = LeaseMode::kExclusive);
// INVALID_ARGUMENT naming `field` (its ErrorInfo, reason kInvalidField).
std::string InvalidArgumentText(absl::string_view field);
std::string ResourceText(const ResourceInfo& info);

class LockModel {
 public:
  LockModel(const LockLimits& limits, absl::Time now) : limits_(limits), now_(now) {}

  // The calls, as LockManager takes them; `call` names the reply.
  void Acquire(int call, const AcquireArgs& args);
  // The client of the parked Acquire `call` went away. Its CANCELLED reply
  // is immediate, not part of a commit.
  void Cancel(int call);
  void Renew(int call, const std::string& resource, uint64_t token, absl::Duration ttl);
  void Release(int call, const std::string& resource, uint64_t token,
               const std::string& request_id);
  // Moves the clock to `target`, running expiries (hand-offs to the next
  // waiters), wait timeouts and the drop of waiters not reattached in time.
  void AdvanceTo(absl::Time target);

  void CommitStep();
  void FailStep();
  void Crash();

  // The replies decided since the last call, in decision order.
  std::vector<Expected> TakeExpected();
  void LearnToken(int grant, uint64_t token) { tokens_[grant] = token; }
  uint64_t TokenOf(int grant) const;

  // What Describe(resource) must answer now (tokens as known).
  ResourceInfo Describe(const std::string& resource) const;

  // For the test's choice of calls.
  struct Holding {
    std::string holder;
    uint64_t token = 0;
    LeaseMode mode = LeaseMode::kExclusive;
    absl::Duration remaining;
    std::deque<std::string> request_ids;
  };
  // The leases of `resource`: the exclusive one first, then the others in
  // grant order.
  std::vector<Holding> Holdings(const std::string& resource) const;
  // The parked calls of `resource`, in order.
  struct Parked {
    int call = 0;  // 0: detached, its client has not come back
    std::string holder;
    std::string request_id;
    LeaseMode mode = LeaseMode::kExclusive;
    uint32_t permits = 0;
  };
  std::vector<Parked> Queue(const std::string& resource) const;
  // Whether a shared lease, a permit or a waiter for one is in memory or in
  // the store: what a restart must keep beside the exclusive leases.
  bool HasOtherKinds() const;
  absl::Time now() const { return now_; }

 private:
  struct Lease {
    std::string holder;
    int grant = 0;
    LeaseMode mode = LeaseMode::kExclusive;
    uint32_t holds = 0;
    absl::Duration ttl;  // the longest asked for: what a reload re-arms
    absl::Time expiry;
    std::deque<std::string> request_ids;
  };
  struct Waiter {
    int call = 0;  // 0: detached (loaded from the store)
    std::string holder;
    absl::Duration ttl;
    std::string request_id;
    absl::Time deadline;  // attached waiters only
    uint64_t seq = 0;     // its place in the store; 0: none (no request id)
    bool persisted = false;  // its row is committed
    LeaseMode mode = LeaseMode::kExclusive;
    uint32_t permits = 0;
  };
  struct Resource {
    std::optional<Lease> lease;  // the exclusive lease
    // Shared leases or permits, in grant order: within a resource, the
    // order of their tokens too.
    std::vector<Lease> shared;
    // The semaphore's size while it is one; stale once nothing refers to
    // the resource (Semaphore() and Acquire() look).
    uint32_t permits = 0;
    std::list<Waiter> waiters;
  };
  // What the store holds: the last committed leases and waiter rows.
  struct StoredHold {
    std::string resource;
    Lease lease;
    uint32_t permits = 0;
  };
  struct Stored {
    std::map<std::string, Lease> leases;  // exclusive, by resource
    std::map<int, StoredHold> holds;      // by grant: token order per resource
    std::map<uint64_t, std::pair<std::string, Waiter>> rows;  // seq -> resource, row
  };

  void Expect(Expected e);
  static bool InUse(const Resource& r);
  // The semaphore's size, or 0 when `r` is no semaphore now.
  static uint32_t Semaphore(const Resource& r);
  // "mode" or "permits" when LockManager refuses `args` on `r` as
  // INVALID_ARGUMENT; empty when it takes it.
  std::string KindError(const AcquireArgs& args, const Resource& r) const;
  // Whether a new lease of `mode` for `holder` fits `r` now, the queue aside.
  bool CanGrant(const Resource& r, const std::string& holder, LeaseMode mode) const;
  // The holder's lease that a request of `mode` re-enters, or null.
  static Lease* Reentrant(Resource& r, const std::string& holder, LeaseMode mode);
  // Whether `holder`, holding the exclusive lease, takes a shared one now.
  bool Downgrade(const Resource& r, const std::string& holder, LeaseMode mode) const;
  // The exclusive lease, else the oldest other one; or null.
  static const Lease* Oldest(const Resource& r);
  // The lease of `r` whose token is `token`, of any kind, or null.
  Lease* FindLease(Resource& r, uint64_t token) const;
  void Grant(Resource& r, const std::string& holder, LeaseMode mode, absl::Duration ttl,
             const std::string& request_id, int call);
  // A reentrant acquire of `lease` by its holder.
  void Reenter(Lease& lease, int call, absl::Duration ttl, const std::string& request_id);
  // Serves the queue from its head while its waiters fit and their clients
  // are there, then each new holder's own parked calls (as
  // LockManager::GrantWaiters).
  void GrantWaiters(Resource& r);
  // Grants `holder`'s parked calls that its leases let through at once.
  void GrantHolderWaiters(Resource& r, const std::string& holder);
  static Lease* ByGrant(Resource& r, int grant);
  // Ends the lease `grant` of `r` and serves the queue.
  void EndLease(Resource& r, int grant);
  Expected NotAcquired(int call, const Resource& r) const;
  void Remember(Lease& lease, const std::string& request_id) const;
  // Puts the store's leases back, each held a full TTL from now.
  void RestoreLeases();
  // The store's rows that are not in memory come back as detached waiters
  // (LockManager::LoadFromStore); then every queue is served.
  void Reload();

  const LockLimits limits_;
  absl::Time now_;
  std::map<std::string, Resource> resources_;
  Stored stored_;
  std::vector<absl::Time> drop_timers_;
  std::vector<uint64_t> parked_this_step_;  // seqs
  std::vector<Expected> expected_;
  std::map<int, uint64_t> tokens_;
  int next_grant_ = 1;
  uint64_t next_seq_ = 1;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_TESTS_UNIT_LOCK_MODEL_H_
