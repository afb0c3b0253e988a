// LockModel: what the lock service may answer, judged from the replies it
// gave before, for lock_service_fuzzer.cc. It follows each resource's lease
// (holder, token, holds, exact expiry on the fake clock) and fails the
// fuzz input (FUZZ_CHECK) on any reply that breaks a promise of
// docs/semantics.md:
//   - a new grant's token is larger than every token seen before, also
//     across restarts; a reentrant grant keeps its token;
//   - no grant while another holder's lease is live, nor during the
//     lock-delay after an expiry; the same holder is never refused;
//   - a Renew or Release with a token that does not hold the lease is
//     ABORTED (lease lost) and changes nothing; one that holds it succeeds;
//     a renewed lease ends exactly `ttl` after the renew, and ttl > 0;
//   - a try-lock or an expired wait answers "not acquired" with the
//     current holder's token (0 when free) exactly when its wait runs out;
//   - Describe reports the lease, its holds and its remaining time exactly;
//   - leases survive a restart, re-armed for a TTL that was asked for
//     (capped by max_hold, which counts from the restart).
// Times are the fake clock's at the moment the manager decided: the harness
// settles after every request and every timer.
//
// Not the random sequences' LockModel (tests/unit/lock_model.h), which
// predicts every reply exactly: it can because its runner keeps lease TTLs
// on a 10 ms grid and every wait deadline off it, so no two timers ever
// fall due at once, and because it leaves out the lock-delay and max_hold.
// A fuzzer's clock steps, TTLs and waits are arbitrary, with timers due at
// the same instant in an order only the timer queue knows, so this one
// judges each reply by the promises above instead of predicting it.
//
// Thread safety: not thread-safe; the harness calls it from one thread.
#ifndef FENCEGATE_TESTS_FUZZ_LOCK_MODEL_H_
#define FENCEGATE_TESTS_FUZZ_LOCK_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::fuzz {

class LockModel {
 public:
  explicit LockModel(const lockservice::LockLimits& limits) : limits_(limits) {}

  // `now`: when the manager decided. `started`: when the call was made.
  void OnAcquire(const lockservice::AcquireArgs& args, absl::Time started, absl::Time now,
                 const absl::StatusOr<lockservice::AcquireResult>& result);
  void OnRenew(const lockservice::RenewArgs& args, absl::Time now,
               const absl::StatusOr<lockservice::RenewResult>& result);
  void OnRelease(const lockservice::ReleaseArgs& args, absl::Time now,
                 const absl::StatusOr<lockservice::ReleaseResult>& result);
  void OnDescribe(const std::string& resource, absl::Time now,
                  const absl::StatusOr<lockservice::ResourceInfo>& result);

  // Leases whose expiry has passed are gone.
  void Expire(absl::Time now);
  // After a restart at `now`: every lease must be held again (a Describe
  // the harness made, `info`), for a TTL that was asked for; lock-delays are
  // forgotten (they live in memory only).
  void OnRestart(absl::Time now,
                 const std::map<std::string, lockservice::ResourceInfo>& info);
  // Resources the model believes are held.
  std::map<std::string, uint64_t> Held() const;

 private:
  struct Lease {
    std::string holder;
    uint64_t token = 0;
    uint32_t holds = 0;
    absl::Time expiry;
    // What a restart re-arms the lease for lies in [ttl_low, ttl_high]: the
    // longest TTL asked for, unless a call was taken as a retry.
    absl::Duration ttl_low, ttl_high;
  };
  struct Resource {
    std::optional<Lease> lease;
    std::optional<absl::Time> expired_at;  // for lock-delay
  };

  // The live lease of `name` at `now`, or null (an ended one is dropped).
  Lease* Live(const std::string& name, absl::Time now);
  // A refused Renew/Release: ABORTED with the lease-lost reason, never for
  // the live lease's own token.
  void CheckLeaseLost(const char* op, const std::string& resource, uint64_t token,
                      absl::Time now, const absl::Status& status);

  const lockservice::LockLimits limits_;
  std::map<std::string, Resource> resources_;
  uint64_t max_token_ = 0;
};

}  // namespace fencegate::fuzz

#endif  // FENCEGATE_TESTS_FUZZ_LOCK_MODEL_H_
