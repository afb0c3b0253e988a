// Small helpers of the cluster tests: raw calls to one lock-service
// instance (no retries, so a test sees exactly what that instance answers),
// and a LockClient over several instances, whose default retry budget
// spans a failover.
#ifndef FENCEGATE_TESTS_CLUSTER_CLUSTER_CLIENT_H_
#define FENCEGATE_TESTS_CLUSTER_CLUSTER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/v1/lock.grpc.pb.h"

namespace fencegate::testing {

// One instance, one call, no retry.
class InstanceStub {
 public:
  explicit InstanceStub(const std::string& address);

  absl::StatusOr<v1::AcquireResponse> Acquire(const std::string& resource,
                                              const std::string& holder,
                                              absl::Duration ttl, absl::Duration wait,
                                              absl::Duration deadline = absl::Seconds(30),
                                              const std::string& request_id = "");
  absl::StatusOr<v1::RenewResponse> Renew(const std::string& resource, uint64_t token,
                                          absl::Duration ttl);
  absl::StatusOr<v1::ReleaseResponse> Release(const std::string& resource, uint64_t token);
  absl::StatusOr<v1::DescribeResponse> Describe(const std::string& resource,
                                                absl::Duration deadline = absl::Seconds(30));

 private:
  std::unique_ptr<v1::LockService::Stub> stub_;
};

// A LockClient over `target` (every instance). Its retries of UNAVAILABLE
// last the library's call_timeout (15 s), well past a failover (the
// instances' etcd session TTL and an election), as docs/operations-etcd.md
// advises.
std::unique_ptr<client::LockClient> FailoverClient(const std::string& target);

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_CLUSTER_CLUSTER_CLIENT_H_
