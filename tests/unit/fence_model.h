// FenceModel: the reference model of the gateway's fenced storage
// (gateway/fenced_store.h over gateway/storage_backend.h). The random
// sequences (fence_sequence.h) and the gateway fuzz target
// (tests/fuzz/gateway_fuzzer.cc) check the real core against it. The
// contract written as plainly as possible: per resource a fence, a revision
// and a map of keys; each op applied in order.
//
//   Write/MultiWrite  accepted iff token >= fence and every expected_version
//                     matches (checked against the state before the op, in
//                     mutation order); then the revision grows by one, the
//                     fence becomes the token and every mutation is applied.
//                     Stale is reported before mismatch.
//   fenced Read       accepted iff token >= fence; raises the fence. With
//                     token 0 it is a plain Read.
//   Fence             accepted iff token >= fence; raises the fence.
//   RaiseFence        grant-time fencing: the fence becomes
//                     max(fence, position); a fence already past it is not
//                     an error, and the reply carries the fence as it is.
//   Read, List,       the committed state, answered at once, even in the
//   Describe          middle of a batch. List pages hold the keys after the
//                     page token in byte order, page_size 0 meaning the
//                     limits' default page size; the next page token is the
//                     page's last key when more keys follow, else empty.
// A refused op changes nothing, not even the fence. Bad input the model
// knows (a token of 0 or above 2^63-1, an empty key, a mutation that
// neither puts nor deletes) is refused before anything is queued. It does
// not decide the limits' bounds on sizes and counts, nor signatures: an op
// the real core refuses for those (INVALID_ARGUMENT, PERMISSION_DENIED)
// must not be given to the model; the caller checks that it changed
// nothing by reading the state back.
//
// Durability: a step (one op, or a batch of them committed together) is
// kept by CommitStep() or undone whole by FailStep(), as a failed commit
// must. A crash loses only the fence cache (Restart()).
//
// The fence cache (gateway/fence_cache.h), unless constructed without it:
// per resource the fence last committed by a step that decided an op on it,
// or seen by a plain Read. A fenced op (Write, fenced Read, Fence) with a
// token below it is refused with that fence at once (not queued, so no
// commit can fail it); RaiseFence below it answers it at once. A failed
// step teaches it nothing; Restart() empties it.
//
// Each op returns the reply it expects as text, made by the *Text functions
// below; ReplyText() writes down a real reply the same way. Callers compare
// the texts and print them on failure. User bytes (keys, values, page
// tokens) are C-escaped and quoted, so equal texts mean equal replies.
//
// Thread safety: none; one thread.
#ifndef FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_
#define FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gateway/gateway_limits.h"
#include "gateway/requests.h"
#include "gateway/storage_backend.h"
#include "tests/unit/fenced_store_calls.h"

namespace fencegate::gateway {

// Reply texts.
std::string WrittenText(uint64_t version, uint64_t fence);
std::string ReadText(bool found, absl::string_view value, uint64_t version, uint64_t fence);
std::string FencedText(uint64_t fence);
std::string ListText(const std::vector<KeyInfo>& keys, absl::string_view next_page_token);
std::string DescribeText(const ResourceStats& stats);
std::string StaleText(uint64_t fence);
std::string MismatchText(uint64_t fence, uint64_t version);
std::string InvalidText(absl::string_view field);
inline constexpr char kUnavailableText[] = "UNAVAILABLE";

// A real reply as text: the texts above for the replies and errors the
// model knows, Status::ToString() for anything else.
std::string ReplyText(const absl::Status& status);
std::string ReplyText(const absl::StatusOr<WriteResult>& reply);
std::string ReplyText(const absl::StatusOr<ReadResult>& reply);
std::string ReplyText(const absl::StatusOr<FenceResult>& reply);
std::string ReplyText(const absl::StatusOr<ListResult>& reply);
std::string ReplyText(const absl::StatusOr<ResourceStats>& reply);

class FenceModel {
 public:
  struct Object {
    std::string value;
    uint64_t version = 0;
  };
  struct Resource {
    uint64_t fence = 0;
    uint64_t revision = 0;
    std::map<std::string, Object> objects;  // in byte order, as List pages
  };

  // An op's expected reply, and whether it goes through group commit (bad
  // input, plain reads, List and Describe do not: they are answered at
  // once, and no commit can fail them).
  struct Answer {
    std::string text;
    bool queued = true;
  };

  // `limits`: only its default_page_size is used (List). `fence_cache`: as
  // FencedStore::refuses_from_memory() of the store it stands for.
  explicit FenceModel(const GatewayLimits& limits = GatewayLimits(), bool fence_cache = true)
      : limits_(limits), fence_cache_(fence_cache) {}

  Answer Write(const std::string& resource, uint64_t token, const std::vector<M>& mutations,
               bool multi);
  Answer FencedRead(const std::string& resource, const std::string& key, uint64_t token);
  Answer Fence(const std::string& resource, uint64_t token);
  Answer RaiseFence(const std::string& resource, uint64_t position);
  // A plain read: committed state, answered at once; fills the cache.
  Answer Read(const std::string& resource, const std::string& key);
  Answer List(const std::string& resource, uint32_t page_size,
              const std::string& page_token) const;
  Answer Describe(const std::string& resource) const;

  void CommitStep();
  void FailStep();
  // A restart of the store: the fence cache starts empty.
  void Restart() { floors_.clear(); }
  void set_fence_cache(bool on) { fence_cache_ = on; }

  // The resource as committed; an unknown one is empty with fence 0.
  const Resource& Get(const std::string& resource) const { return Find(committed_, resource); }
  // The resource with the ops of the step in progress applied.
  const Resource& Current(const std::string& resource) const {
    return Find(state_, resource);
  }

 private:
  static const Resource& Find(const std::map<std::string, Resource>& in,
                              const std::string& resource);
  // The cache's fence of `resource` (0: unknown, or no cache).
  uint64_t Floor(const std::string& resource) const;
  // `resource` joins the step's batch.
  void Decide(const std::string& resource) { deciding_.insert(resource); }

  const GatewayLimits limits_;
  bool fence_cache_;
  std::map<std::string, Resource> state_;
  std::map<std::string, Resource> committed_;
  std::map<std::string, uint64_t> floors_;  // the fence cache
  std::set<std::string> deciding_;          // resources of the step's batch
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_
