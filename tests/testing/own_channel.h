// OwnChannel: a gRPC channel on its own TCP connection (not shared with
// other channels to the same address, as separate client processes would
// have), returned only once it is connected.
//
// Why wait: gRPC 1.51's connect() can fail spuriously on a loaded machine
// (seen here as errno ENOENT on loopback); the channel then fails every RPC
// without wait_for_ready at once for its 1 s reconnect backoff, so a test
// that opens many channels and starts firing would count those as server
// errors. Waiting for READY first keeps the tests about the server.
// Thread-safe; blocks up to `timeout`.
#ifndef FENCEGATE_TESTS_TESTING_OWN_CHANNEL_H_
#define FENCEGATE_TESTS_TESTING_OWN_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace fencegate::testing {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OwnChannel(
    const std::string& address, absl::Duration timeout = absl::Seconds(30));

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_TESTING_OWN_CHANNEL_H_
