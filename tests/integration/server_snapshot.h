// ServerSnapshot: the state the conformance test (bad_input_conformance_test.cc)
// sets up on a running lock service and gateway before its bad requests,
// and the means to prove they changed nothing: the state read back as text,
// and ordinary requests afterwards that must get the very next token and
// the very next version.
//
// Thread safety: one test thread.
#ifndef FENCEGATE_TESTS_INTEGRATION_SERVER_SNAPSHOT_H_
#define FENCEGATE_TESTS_INTEGRATION_SERVER_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/token_signer.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/channel.h"
#include "tests/integration/bad_requests.h"

namespace fencegate::conformance {

class ServerSnapshot {
 public:
  // `signer` signs every token the test sends (the servers' own key file).
  ServerSnapshot(std::shared_ptr<grpc::Channel> lock_channel,
                 std::shared_ptr<grpc::Channel> gateway_channel, const TokenSigner* signer);

  // Sets up what KnownState describes, through ordinary requests.
  absl::StatusOr<KnownState> Prepare();

  // Everything both servers hold about every resource a bad request names:
  // per lock resource, holder, token, holds, waiters and lock-delay (not
  // the remaining TTL, which runs down); per gateway resource, its fence,
  // key count and size, and each key's version, size and value.
  absl::StatusOr<std::string> Take();

  // An ordinary Acquire is granted the token after the last one granted in
  // Prepare(), and an ordinary Write gets the version after the last one:
  // no bad request drew a token or a version on the way.
  absl::Status StillServes(const KnownState& known);

  const std::shared_ptr<grpc::Channel>& lock_channel() const { return lock_channel_; }
  const std::shared_ptr<grpc::Channel>& gateway_channel() const { return gateway_channel_; }

 private:
  v1::TokenSignature Sign(const std::string& resource, uint64_t token) const;
  absl::StatusOr<uint64_t> Acquire(const std::string& resource, const std::string& holder,
                                   const std::string& request_id);
  absl::Status Release(const std::string& resource, uint64_t token);
  absl::StatusOr<uint64_t> Write(const std::string& resource, uint64_t token,
                                 const std::vector<std::pair<std::string, std::string>>& puts);

  const std::shared_ptr<grpc::Channel> lock_channel_;
  const std::shared_ptr<grpc::Channel> gateway_channel_;
  const std::unique_ptr<v1::LockService::Stub> locks_;
  const std::unique_ptr<v1::Gateway::Stub> gateway_;
  const TokenSigner* const signer_;
};

}  // namespace fencegate::conformance

#endif  // FENCEGATE_TESTS_INTEGRATION_SERVER_SNAPSHOT_H_
