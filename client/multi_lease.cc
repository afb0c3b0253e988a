#include "fencegate/client/multi_lease.h"

#include <utility>

namespace fencegate::client {

MultiLease::MultiLease(std::vector<std::unique_ptr<Lease>> leases)
    : leases_(std::move(leases)) {}

MultiLease::~MultiLease() { Release().IgnoreError(); }

bool MultiLease::lost() {
  for (const std::unique_ptr<Lease>& lease : leases_) {
    if (lease->lost()) return true;
  }
  return false;
}

absl::Status MultiLease::Check() {
  for (const std::unique_ptr<Lease>& lease : leases_) {
    if (absl::Status status = lease->Check(); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status MultiLease::Renew() {
  absl::Status first;
  for (const std::unique_ptr<Lease>& lease : leases_) first.Update(lease->Renew());
  return first;
}

absl::Status MultiLease::Release() {
  absl::Status first;
  for (const std::unique_ptr<Lease>& lease : leases_) first.Update(lease->Release());
  return first;
}

}  // namespace fencegate::client
