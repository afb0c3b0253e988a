// LockSequence: one seeded random sequence of calls against the real lock
// core (LockManager on a FakeClock and a SqliteLockStore file) and against
// LockModel (lock_model.h), compared after every step.
//
// Steps: try-locks and waiting acquires of each kind (exclusive and shared
// on the read-write locks "r0" and "r1", permits on the semaphore "s0",
// whose size each sequence draws: 2 or 3; two of them per sequence), now and then of the
// other way or with permits out of range (INVALID_ARGUMENT), reentrant acquires and
// downgrades, retries with
// the same request id (of a grant, or of a parked call), renewals and
// releases by the owner and by stale or made-up tokens, retried releases,
// clients that go away, clock advances (onto lease expiries too), commits
// that fail, and crashes: the manager is dropped and a new one loads the
// same SQLite file, sometimes right after a failed commit lost a batch.
//
// Checked after every step: each reply equals the model's (grant and its
// kind, hold count, TTL, holder's token, lease lost, cancelled, unavailable,
// the field a bad argument names), and no
// reply arrives that the model did not expect; every new token is larger
// than every token revealed before it, also across crashes, so no token
// that reached a caller is ever issued again; Describe of every resource
// equals the model's (its kind, holders and oldest lease; every
// acknowledged grant, renewal
// and release survives a crash, leases re-armed for their full TTL; expiry
// hands the lock to the next waiter at the expiry instant).
//
// The files live in TempDir::InMemory(): a crash here is the process
// dying, never the machine, so fsync does not matter and costs nothing.
//
// Thread safety: one test thread per sequence.
#ifndef FENCEGATE_TESTS_UNIT_LOCK_SEQUENCE_H_
#define FENCEGATE_TESTS_UNIT_LOCK_SEQUENCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "harness/temp_dir.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/sqlite_lock_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/faulty_lock_store.h"
#include "tests/testing/random_sequences.h"
#include "tests/testing/reply.h"
#include "tests/unit/lock_model.h"

namespace fencegate::lockservice {

struct LockSequenceOptions {
  // Crashes and failed commits also while shared leases, permits or their
  // waiters exist, in memory or in the store: the stores keep them
  // (LockStoreBatch::holds, a waiter's mode and permits). Off, a sequence
  // restarts only while every lease and waiter is exclusive, and skips the
  // crash steps (the last one too) otherwise.
  bool restart_with_other_kinds = true;
};

class LockSequence {
 public:
  explicit LockSequence(uint64_t seed, LockSequenceOptions options = {});

  // Runs the whole sequence. OK, or INTERNAL naming the first violation,
  // followed by every step up to it and what each one answered.
  absl::Status Run();

 private:
  using Pending = std::variant<testing::ReplyPtr<AcquireResult>,
                               testing::ReplyPtr<RenewResult>,
                               testing::ReplyPtr<ReleaseResult>>;

  absl::Status Open();
  // One random step; `log` describes it.
  absl::Status Step(std::string& log);
  // What a call step does: the real call and the model's, as one unit.
  void DoAcquire(const AcquireArgs& args, std::string& log);
  void DoRenew(const std::string& resource, uint64_t token, absl::Duration ttl,
               std::string& log);
  void DoRelease(const std::string& resource, uint64_t token,
                 const std::string& request_id, std::string& log);
  // A call step: random arguments, chosen from the model's state.
  void RandomCall(std::string& log);
  // The kind of a new Acquire of `resource` (see the header).
  void RandomKind(const std::string& resource, AcquireArgs& args);
  uint64_t SomeOtherToken(uint64_t current);
  // Whether a crash or a failed commit may come now (LockSequenceOptions).
  bool MayRestart() const;
  absl::Status Crash(std::string& log);
  // Compares every reply and every resource with the model.
  absl::Status Check(std::string& log);

  const LockSequenceOptions options_;
  testing::SequenceRng rng_;
  const std::vector<std::string> resources_;  // the two this sequence uses
  const uint32_t semaphore_size_;             // of "s0"
  testing::TempDir dir_ = testing::TempDir::InMemory();
  testing::FakeClock clock_;
  LockLimits limits_;
  LockModel model_;
  std::unique_ptr<SqliteLockStore> store_;
  std::unique_ptr<testing::FaultyLockStore> faulty_;
  std::unique_ptr<LockManager> manager_;
  std::map<int, Pending> pending_;               // replies not yet checked
  std::map<int, LockManager::CallId> call_ids_;  // of the Acquire calls
  uint64_t max_token_ = 0;  // the largest token revealed so far
  int next_call_ = 1;
  int next_request_id_ = 1;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_TESTS_UNIT_LOCK_SEQUENCE_H_
