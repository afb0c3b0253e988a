// FenceSequence: one seeded random sequence of fenced operations against the
// real gateway core (FencedStore over SqliteStorage, behind a
// FaultyStorageBackend) and against FenceModel (fence_model.h), compared
// after every step.
//
// Steps: Write, MultiWrite, fenced Read and Fence with tokens around each
// resource's current fence (below it, at it, above it, at 2^63-1), expected
// versions that match or not, some bad input; one op at a time or several
// in one group-commit batch (the writer is held inside a commit while they
// are submitted, so they are applied together, in order); commits that fail
// (the whole batch is rolled back); and crashes: the store is closed and
// opened again on the same file, sometimes right after a failed commit.
//
// Checked after every step: each reply equals the model's (version, fence,
// read value, STALE_TOKEN or VERSION_MISMATCH with the current fence and
// version, INVALID_ARGUMENT and its field, UNAVAILABLE for a failed batch);
// the committed fence, key count, size and key listing of each resource the
// step touched equal the model's, and no fence ever goes down. After each
// crash, and at the end of every sequence (which ends with one), all of
// that for every resource and every key's value too: what was acknowledged
// is there, what was refused or failed is not.
//
// The files live in TempDir::InMemory(): a crash here is the process
// dying, never the machine, so fsync does not matter and costs nothing.
//
// Thread safety: one test thread per sequence.
#ifndef FENCEGATE_TESTS_UNIT_FENCE_SEQUENCE_H_
#define FENCEGATE_TESTS_UNIT_FENCE_SEQUENCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "gateway/fenced_store.h"
#include "gateway/sqlite_storage.h"
#include "tests/testing/faulty_storage_backend.h"
#include "tests/testing/random_sequences.h"
#include "harness/temp_dir.h"
#include "tests/unit/fence_model.h"
#include "tests/unit/fenced_store_calls.h"

namespace fencegate::gateway {

class FenceSequence {
 public:
  // One op of a step: the request, what the model expects, the reply.
  struct Op {
    enum class Kind { kWrite, kMultiWrite, kFencedRead, kFence };
    Kind kind = Kind::kFence;
    std::string resource;
    uint64_t token = 0;
    std::string key;           // kFencedRead
    std::vector<M> mutations;  // kWrite, kMultiWrite
    FenceModel::Answer want;
    std::variant<ReplyPtr<WriteResult>, ReplyPtr<ReadResult>, ReplyPtr<FenceResult>> reply;
  };

  explicit FenceSequence(uint64_t seed);

  // Runs the whole sequence. OK, or INTERNAL naming the first violation,
  // followed by every step up to it and what each op answered.
  absl::Status Run();

 private:
  absl::Status Open();
  absl::Status Step(std::string& log);
  // A random op, decided by the model now (in order within a batch).
  Op RandomOp();
  uint64_t TokenNear(uint64_t fence);
  std::vector<M> RandomMutations(const std::string& resource, bool multi);
  // Submits `ops` as one batch: the writer is parked inside another
  // commit until all of them are queued. `fail`: that batch's commit fails.
  void SubmitBatch(std::vector<Op>& ops, bool fail);
  void Submit(Op& op);
  absl::Status Crash();
  // Compares the committed state of `resources` with the model's; with
  // `values`, every key's value too.
  absl::Status CheckState(const std::vector<std::string>& resources, bool values);

  testing::SequenceRng rng_;
  testing::TempDir dir_ = testing::TempDir::InMemory();
  GatewayLimits limits_;
  FenceModel model_{limits_};
  std::unique_ptr<SqliteStorage> storage_;
  std::unique_ptr<testing::FaultyStorageBackend> faulty_;
  std::unique_ptr<FencedStore> store_;
  std::map<std::string, uint64_t> fence_seen_;  // the largest fence observed
  int next_value_ = 1;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_FENCE_SEQUENCE_H_
