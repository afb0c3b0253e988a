// MultiLease: the leases of one multi-resource Acquire
// (LockClient::AcquireMultiLease), renewed and released together. Each is a
// Lease of its own (lease.h: its own token, renewal and loss); the set is
// valid while every one of them is, and lost once any one is. Release()
// releases them all, as does the destructor (best effort).
//
// Thread safety: thread-safe, as Lease is.
#ifndef FENCEGATE_CLIENT_MULTI_LEASE_H_
#define FENCEGATE_CLIENT_MULTI_LEASE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fencegate/client/lease.h"

namespace fencegate::client {

class MultiLease {
 public:
  // The leases, in the order their resources were asked for.
  explicit MultiLease(std::vector<std::unique_ptr<Lease>> leases);
  ~MultiLease();
  MultiLease(const MultiLease&) = delete;
  MultiLease& operator=(const MultiLease&) = delete;

  size_t size() const { return leases_.size(); }
  // The i-th resource's lease (its token, signature and FencingOf for the
  // gateway). REQUIRES: i < size().
  Lease& lease(size_t i) const { return *leases_[i]; }

  // True once any lease is lost or released.
  bool lost();
  // OK while every lease is valid; otherwise the first one's reason.
  absl::Status Check();
  // Renews every lease now; the first error, after trying them all.
  absl::Status Renew();
  // Releases every lease; the first error, after trying them all.
  // Idempotent.
  absl::Status Release();

 private:
  std::vector<std::unique_ptr<Lease>> leases_;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_MULTI_LEASE_H_
