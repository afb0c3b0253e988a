// StandbyShadow: TEST BUILDS ONLY (FENCEGATE_TEST_HOOKS,
// common/test_hooks/test_hooks.h). What the planted bug
// lock_standby_answers_locally serves a standby's calls from instead of
// forwarding them to the leader: a lock table of the instance's own (a
// LockManager over a LockStore in memory), as a standby that "helps" by
// answering from its own state would. The torture suite's checker must catch it
// (docs/torture-topologies.md).
//
// In production builds MakeStandbyShadow() returns null and holds no code.
//
// Thread safety: the returned service is thread-safe (LockServiceImpl).
// Ownership: `clock` must outlive the service.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_STANDBY_SHADOW_H_
#define FENCEGATE_LOCKSERVICE_SERVER_STANDBY_SHADOW_H_

#include <memory>

#include "common/core/token_signer.h"
#include "fencegate/clock.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/server/lock_service_base.h"

namespace fencegate::lockservice {

// Null unless this is a test build with --planted_bug=lock_standby_answers_locally.
std::shared_ptr<LockServiceBase> MakeStandbyShadow(Clock* clock, const LockLimits& limits,
                                                   const TokenSigner* signer);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_STANDBY_SHADOW_H_
