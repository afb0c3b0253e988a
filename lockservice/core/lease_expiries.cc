// LeaseExpiries (lease_expiries.h): the held leases by expiry.
#include "lockservice/core/lease_expiries.h"

#include <algorithm>

namespace fencegate::lockservice {

absl::Time CappedExpiry(const HeldLease& lease, absl::Duration ttl, absl::Time now,
                        absl::Duration max_hold) {
  absl::Time expiry = now + ttl;
  if (max_hold > absl::ZeroDuration()) {
    expiry = std::min(expiry, lease.acquired_at.get() + max_hold);
  }
  return expiry;
}

void LeaseExpiries::Add(const std::string& key, const HeldLease& lease) {
  index_.Add(lease.expiry, lease.token, &key);
  timer_.Arm(index_);
}

void LeaseExpiries::Move(HeldLease& lease, absl::Time expiry) {
  if (CompactTime(expiry) == lease.expiry) return;
  const CompactTime from = lease.expiry;
  lease.expiry = CompactTime(expiry);
  index_.Move(from, lease.token, lease.expiry);
  timer_.Arm(index_);
}

void LeaseExpiries::Remove(CompactTime expiry, uint64_t token) {
  index_.Remove(expiry, token);
  timer_.DisarmIfEmpty(index_);
}

}  // namespace fencegate::lockservice
