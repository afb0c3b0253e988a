// LockManager's link seams (lock_manager.h: TestBuildStore, CanGrant,
// LeaseOfToken, RefuseTryMany): the one source of the lock service's core that the
// torture suite's test builds replace. tests/torture/CMakeLists.txt links
// tests/torture/planted_lock_bugs.cc in place of this file; there the same
// four plant the bug --planted_bug names (docs/torture.md, "Planted bugs")
// around the same calls. Each seam here is a thin call of what it decides
// with, so the test builds reuse the rules and never a copy of them, and
// production pays no wrapper, flag or virtual call for them.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lockservice/core/grant_rule.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/lock_manager_internal.h"

namespace fencegate::lockservice {

std::unique_ptr<LockStore> LockManager::TestBuildStore(LockStore* /*store*/) {
  return nullptr;
}

bool LockManager::CanGrant(const ResourceState& r, const std::string& holder,
                           LeaseMode mode) const {
  return GrantAllowed(
      mode, r.FactsFor(holder, clock_->Now(), limits_.max_holders_per_resource));
}

HeldLease* LockManager::LeaseOfToken(absl::string_view /*op*/, ResourceState& r,
                                     uint64_t token) {
  return r.FindLease(token);
}

void LockManager::RefuseTryMany(const MultiAcquireArgs& args,
                                const std::vector<ResourceState*>& rs, size_t busy,
                                Callback<MultiAcquireResult> done) {
  ReplyTryManyRefused(args.resources[busy], *rs[busy], std::move(done));
}

}  // namespace fencegate::lockservice
