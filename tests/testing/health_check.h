// HealthStatus: asks a server's grpc.health.v1.Health/Check (overall
// service "") and returns the serving status it reports. Debian ships no
// C++ health.proto, so the bytes are spelled out: an empty
// HealthCheckRequest, and HealthCheckResponse{status} = field 1, varint.
// Thread-safe; blocks up to `timeout`.
#ifndef FENCEGATE_TESTS_TESTING_HEALTH_CHECK_H_
#define FENCEGATE_TESTS_TESTING_HEALTH_CHECK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace fencegate::testing {

// grpc.health.v1.HealthCheckResponse.ServingStatus values.
enum class Serving { kUnknown = 0, kServing = 1, kNotServing = 2 };

absl::StatusOr<Serving> HealthStatus(std::shared_ptr<grpc::Channel> channel,
                                     absl::Duration timeout = absl::Seconds(30));

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_HEALTH_CHECK_H_
