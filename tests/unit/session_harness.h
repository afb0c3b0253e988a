// SessionHarness: a gateway Session (gateway/session.h) on the fake
// transport of tests/testing/stream_harness.h, which a test drives as a
// client would, decoding what the session writes into GatewayResults.
//
// Also builds and decodes the stream's messages for tests that speak to a
// real server (Call(), Encode(), Decode()).
//
// Thread safety: as StreamHarness.
#ifndef FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_
#define FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fencegate/v1/gateway.pb.h"
#include "gateway/fenced_store.h"
#include "gateway/session.h"
#include "tests/testing/stream_harness.h"

namespace fencegate::gateway {

// ------------------------------------------------ messages, both ways

// One call of a GatewaySessionRequest.
v1::GatewayCall Call(uint64_t request_id, const v1::WriteRequest& write);
v1::GatewayCall Call(uint64_t request_id, const v1::MultiWriteRequest& write);
v1::GatewayCall Call(uint64_t request_id, const v1::ReadRequest& read);
v1::GatewayCall Call(uint64_t request_id, const v1::FenceRequest& fence);
v1::WriteRequest PutRequest(const std::string& resource, uint64_t token,
                            const std::string& key, const std::string& value);
v1::ReadRequest ReadRequest(const std::string& resource, const std::string& key,
                            uint64_t token = 0);
v1::FenceRequest FenceRequest(const std::string& resource, uint64_t token);

// The bytes of a GatewaySessionRequest carrying `calls` in order.
std::string Encode(const std::vector<v1::GatewayCall>& calls);
// The results of a GatewaySessionResponse; INTERNAL if it does not parse.
absl::StatusOr<std::vector<v1::GatewayResult>> Decode(const std::string& bytes);
// A result's status: OK for a response, else its code, message and detail.
absl::Status StatusOf(const v1::GatewayResult& result);

// ------------------------------------------------------------ harness

class SessionHarness final : public testing::StreamHarness {
 public:
  explicit SessionHarness(FencedStore* store, StreamLimits limits = StreamLimits());
  ~SessionHarness() override { Stop(); }

  using StreamHarness::Send;
  void Send(const std::vector<v1::GatewayCall>& calls) { Send(Encode(calls)); }

  // The answer to `request_id` (the first one, if several came); pumps
  // written messages meanwhile. DEADLINE_EXCEEDED if none comes in 60 s.
  absl::StatusOr<v1::GatewayResult> WaitForAnswer(uint64_t request_id);
  // Every answer to `request_id` taken so far, in arrival order.
  std::vector<v1::GatewayResult> AnswersTo(uint64_t request_id);
  // Answers taken so far, in arrival order.
  std::vector<v1::GatewayResult> answers();

  // The transport's rules are StreamHarness's.
  static int ProtocolErrors() { return StreamHarness::ProtocolErrors(); }

 private:
  bool Take(const std::string& bytes) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::vector<v1::GatewayResult> answers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_SESSION_HARNESS_H_
