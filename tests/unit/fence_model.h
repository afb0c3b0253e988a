// FenceModel: the reference model of the gateway's fenced storage
// (gateway/fenced_store.h over gateway/storage_backend.h) that the
// random-sequence test (fence_sequence_test.cc) checks the real core
// against. The contract written as plainly as possible: per resource a
// fence, a revision and a map of keys; each op applied in order.
//
//   Write/MultiWrite  accepted iff token >= fence and every expected_version
//                     matches (in mutation order); then the revision grows
//                     by one, the fence becomes the token and every
//                     mutation is applied. Stale is reported before mismatch.
//   fenced Read       accepted iff token >= fence; raises the fence. With
//                     token 0 it is a plain read of the committed state,
//                     answered at once, even in the middle of a batch.
//   Fence             accepted iff token >= fence; raises the fence.
// A refused op changes nothing, not even the fence. Bad input (a token of 0
// or above 2^63-1, an empty key) is refused before anything is queued.
//
// Durability: a step (one op, or a batch of them committed together) is
// kept by CommitStep() or undone whole by FailStep(), as a failed commit
// must. A crash changes nothing: the gateway keeps no state in memory.
//
// Each op returns the reply it expects as text, made by the *Text functions
// below, which the test also uses to write down the real replies: it
// compares texts and prints them on failure.
//
// Thread safety: none; one test thread.
#ifndef FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_
#define FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tests/unit/fenced_store_calls.h"

namespace fencegate::gateway {

// Reply texts.
std::string WrittenText(uint64_t version, uint64_t fence);
std::string ReadText(bool found, absl::string_view value, uint64_t version, uint64_t fence);
std::string FencedText(uint64_t fence);
std::string StaleText(uint64_t fence);
std::string MismatchText(uint64_t fence, uint64_t version);
std::string InvalidText(absl::string_view field);
inline constexpr char kUnavailableText[] = "UNAVAILABLE";

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
  // input and plain reads do not: they are answered at once, and no commit
  // can fail them).
  struct Answer {
    std::string text;
    bool queued = true;
  };

  Answer Write(const std::string& resource, uint64_t token, const std::vector<M>& mutations,
               bool multi);
  Answer FencedRead(const std::string& resource, const std::string& key, uint64_t token);
  Answer Fence(const std::string& resource, uint64_t token);

  void CommitStep() { committed_ = state_; }
  void FailStep() { state_ = committed_; }

  // The resource as committed; an unknown one is empty with fence 0.
  const Resource& Get(const std::string& resource) const { return Find(committed_, resource); }
  // The resource with the ops of the step in progress applied.
  const Resource& Current(const std::string& resource) const {
    return Find(state_, resource);
  }

 private:
  static const Resource& Find(const std::map<std::string, Resource>& in,
                              const std::string& resource);

  std::map<std::string, Resource> state_;
  std::map<std::string, Resource> committed_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_FENCE_MODEL_H_
