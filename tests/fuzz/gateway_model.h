// GatewayModel: the gateway's fenced storage as a map, for gateway_fuzzer.cc.
// Requests reach FencedStore one at a time, so every reply is predictable
// exactly, and the model fails the fuzz input (FUZZ_CHECK) on any reply that
// differs from docs/gateway.md:
//   - a write is accepted iff its token >= the resource's fence and every
//     expected_version matches; it raises the fence to its token and gives
//     every key it writes the resource's next revision;
//   - a refused write, read or fence is ABORTED with the reason and the
//     current fence (and version) and changes nothing, nor does one refused
//     as INVALID_ARGUMENT or PERMISSION_DENIED (the harness then reads the
//     resource back);
//   - a fenced read or a Fence raises the fence; a plain read does not;
//     RaiseFence never lowers it; the fence never decreases;
//   - reads, List pages (byte order, sizes, page tokens) and Describe
//     return exactly the committed state, also after a reopen.
//
// Thread safety: not thread-safe; the harness calls it from one thread.
#ifndef FENCEGATE_TESTS_FUZZ_GATEWAY_MODEL_H_
#define FENCEGATE_TESTS_FUZZ_GATEWAY_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gateway/gateway_limits.h"
#include "gateway/requests.h"
#include "gateway/storage_backend.h"

namespace fencegate::fuzz {

class GatewayModel {
 public:
  explicit GatewayModel(const gateway::GatewayLimits& limits) : limits_(limits) {}

  void OnWrite(const gateway::WriteArgs& args,
               const absl::StatusOr<gateway::WriteResult>& result);
  // Plain (token 0) and fenced reads.
  void OnRead(const gateway::ReadArgs& args,
              const absl::StatusOr<gateway::ReadResult>& result);
  void OnFence(const gateway::FenceArgs& args,
               const absl::StatusOr<gateway::FenceResult>& result);
  void OnRaiseFence(const std::string& resource, uint64_t position,
                    const absl::StatusOr<gateway::FenceResult>& result);
  void OnList(const gateway::ListArgs& args,
              const absl::StatusOr<gateway::ListResult>& result);
  void OnDescribe(const std::string& resource,
                  const absl::StatusOr<gateway::ResourceStats>& result);

  // Every resource a write, read or fence was accepted for.
  std::vector<std::string> Resources() const;

 private:
  struct Object {
    std::string value;
    uint64_t version = 0;
  };
  struct Resource {
    uint64_t fence = 0;
    uint64_t revision = 0;
    std::map<std::string, Object> keys;  // byte order, as List promises
  };

  // A refusal of `token` on `resource`: ABORTED iff stale, with the fence.
  // Returns whether the op may go on (token >= fence).
  bool CheckFence(const char* op, const std::string& resource, uint64_t token,
                  const absl::Status& status);

  const gateway::GatewayLimits limits_;
  std::map<std::string, Resource> resources_;
};

}  // namespace fencegate::fuzz

#endif  // FENCEGATE_TESTS_FUZZ_GATEWAY_MODEL_H_
