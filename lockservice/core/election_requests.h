// The lock service's election calls (Campaign, Proclaim, Leader, Resign,
// Observe: lock.proto; docs/semantics.md, "Elections") between their protos
// and LockManager's plain structs, as lock_requests.h does for the lease
// calls, on the same path (unknown fields refused first, then these, then
// the manager). A Campaign becomes an exclusive Acquire that carries the
// value (AcquireArgs::campaign) and a Resign a Release that ends the term
// (ReleaseArgs::resign); a Proclaim or Resign must carry the term's
// signature when tokens are signed, as Renew and Release must. Names are
// checked here under their own field names (election, candidate), so an
// error names the field the caller sent.
//
// Thread safety: pure functions, except that they read `signer`
// (thread-safe).
#ifndef FENCEGATE_LOCKSERVICE_CORE_ELECTION_REQUESTS_H_
#define FENCEGATE_LOCKSERVICE_CORE_ELECTION_REQUESTS_H_

#include "absl/status/statusor.h"
#include "common/core/token_signer.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/elections.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_requests.h"

namespace fencegate::lockservice {

// Answered with FillAcquireResponse, as an Acquire.
absl::StatusOr<AcquireArgs> CampaignArgsFor(const fencegate::v1::CampaignRequest& request,
                                            const TokenSigner* signer,
                                            const LockLimits& limits,
                                            const Caller& caller);
absl::StatusOr<ProclaimArgs> ProclaimArgsFor(
    const fencegate::v1::ProclaimRequest& request, const TokenSigner* signer,
    const LockLimits& limits, const Caller& caller);
absl::StatusOr<ReleaseArgs> ResignArgsFor(const fencegate::v1::ResignRequest& request,
                                          const TokenSigner* signer,
                                          const LockLimits& limits, const Caller& caller);

void FillElectionChange(const ElectionChange& change, fencegate::v1::ElectionChange* out);

// Whether an observer that has seen (after_term, after_seq) is told
// `change`: anything when it has seen nothing (0, 0); otherwise only what
// is newer in (term, seq) order, or a state without a leader whose ended
// term is not known (term 0).
bool NewToObserver(const ElectionChange& change, uint64_t after_term, uint64_t after_seq);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_ELECTION_REQUESTS_H_
