// Elections: what the lock manager keeps for leader election beyond a
// resource's exclusive lease (docs/semantics.md, "Elections"). An election
// is a resource; its leader is the holder of its exclusive lease and its
// term is that lease's token, so a deposed leader's late write is fenced
// like any stale holder's. Kept here: what each leader proclaimed (its
// value and the value's sequence number within the term), and who observes
// which election. A resource nobody campaigns on or observes costs nothing
// here, and a lease none of it.
//
// An election's changes, in the order observers see them: a term begins
// (leader, seq 0), its leader proclaims (seq 1, 2, ...), the term ends
// (not leader, the next seq). (term, seq) only grows along an election.
//
// Thread safety: none; LockManager::mu_ guards it. Observers are called
// with no lock held (Decision::TellChange).
#ifndef FENCEGATE_LOCKSERVICE_CORE_ELECTIONS_H_
#define FENCEGATE_LOCKSERVICE_CORE_ELECTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::lockservice {

// One change of an election, or its state (LockManager::Leader).
struct ElectionChange {
  std::string election;
  // True: `holder` leads in `term` with `value` (its seq-th). False: nobody
  // leads; `term` is the last term that ended (0: none known), and `seq`
  // the sequence number of its end.
  bool leader = false;
  uint64_t term = 0;
  uint64_t seq = 0;
  std::string value;
  std::string holder;
  // With a leader: how long its lease still runs, as decided.
  absl::Duration remaining;
  // The server's wall clock when the change was decided.
  absl::Time at;
};

// Whoever hears an election's changes, once committed, on the thread that
// committed them, in the order decided: an Observe stream. Reference
// counted like a LeaseListener (lease_listener.h): the manager holds a
// reference for each change decided and not yet told.
class ElectionObserver {
 public:
  virtual void Ref() = 0;
  virtual void Unref() = 0;
  // Must not block. The first change an observer hears is the election's
  // state when it was added; changes decided earlier and committed later
  // are not told to it (that state already holds them).
  virtual void OnChange(const ElectionChange& change) = 0;
  // Nothing more will be told, and why (shutdown, or the state was rebuilt
  // after a failed commit: reconnect and resume).
  virtual void OnStopped(const absl::Status& why) = 0;

 protected:
  ~ElectionObserver() = default;
};

class Elections {
 public:
  // What the leader of `election` in `term` proclaimed, or null (the lease
  // with that token was not taken by a Campaign, or is not the leader's).
  const Proclamation* Find(const std::string& election, uint64_t term) const;
  // `term` begins (a Campaign's grant, or a lease loaded from the store)
  // with `said`.
  void Begin(const std::string& election, uint64_t term, Proclamation said);
  // The leader of `term` (its current leader) says `value`: the next
  // sequence number; a term not begun by a Campaign begins here at 0.
  const Proclamation& Proclaim(const std::string& election, uint64_t term,
                               std::string value);
  // `term` ends: forgets it, and returns the sequence number of its end.
  // The end of a term a Campaign began, or of any term of an observed
  // election, is remembered (LastEnd) until the next term begins, so that
  // an observer resuming after it (through a failover, say) learns which
  // term ended; at most kMostRememberedEnds elections' ends are, and none
  // across a restart of the manager.
  uint64_t End(const std::string& election, uint64_t term);
  // The last ended term of `election` remembered (above), with its end's
  // sequence number; {0, 0} if none is.
  std::pair<uint64_t, uint64_t> LastEnd(const std::string& election) const;
  // The most elections whose last ended term is remembered (a few MB).
  static constexpr size_t kMostRememberedEnds = 100000;
  // Forgets every term (the lock manager reloads them from the store).
  void ForgetTerms() {
    terms_.clear();
    ended_.clear();
  }

  // Observers: each holds a reference while registered. An observer is
  // added to an election once. Unobserve returns whether it was there;
  // then the caller drops the reference it held, with no lock held.
  void Observe(const std::string& election, ElectionObserver* observer);
  bool Unobserve(const std::string& election, ElectionObserver* observer);
  // `election`'s observers (empty when none).
  const std::vector<ElectionObserver*>& ObserversOf(const std::string& election) const;
  // Takes every observer out with the reference it held here: pass them to
  // StopObservers.
  std::vector<ElectionObserver*> TakeObservers();

 private:
  struct Term {
    uint64_t term = 0;
    Proclamation said;
  };
  absl::flat_hash_map<std::string, Term> terms_;
  // Elections whose last term ended (End says which): that term and its
  // end's sequence number.
  absl::flat_hash_map<std::string, std::pair<uint64_t, uint64_t>> ended_;
  absl::flat_hash_map<std::string, std::vector<ElectionObserver*>> observers_;
};

// Tells each of `observers` it stopped, and drops the reference it came
// with (Elections::TakeObservers). Call with no lock held.
void StopObservers(std::vector<ElectionObserver*> observers, const absl::Status& why);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_ELECTIONS_H_
