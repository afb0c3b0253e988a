// WorkerControl: a page of memory shared by the torture harness and one
// worker process (a MAP_SHARED mapping of a small file). The harness asks
// through it; the worker tells what it is doing, so the harness can freeze
// it at the moment that matters:
//
//   harness -> worker   quit               finish this round, release, exit 0
//                       stop_before_write  at the next point between a lease
//                                          check and the write it allows,
//                                          raise(SIGSTOP): the whole process
//                                          stops at the worst moment
//   worker -> harness   phase, holding, token, ttl_ms, resource, rounds
//
// The fields are lock-free atomics, which work across processes on shared
// memory. Thread safety: any thread of either process.
#ifndef FENCEGATE_TESTS_TORTURE_WORKER_CONTROL_H_
#define FENCEGATE_TESTS_TORTURE_WORKER_CONTROL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace fencegate::torture {

enum class WorkerPhase : uint32_t {
  kStarting,
  kIdle,
  kAcquiring,
  kReading,
  kThinking,
  kStoppedBeforeWrite,
  kWriting,
  kReleasing,
  kDone,
};

struct WorkerControl {
  std::atomic<uint32_t> quit;
  std::atomic<uint32_t> stop_before_write;
  std::atomic<uint32_t> phase;    // WorkerPhase
  std::atomic<uint32_t> holding;  // 1 from a granted Acquire until its release
  std::atomic<uint32_t> ttl_ms;   // of the lease held
  std::atomic<uint32_t> resource;  // index of the resource held
  std::atomic<uint64_t> token;     // of the lease held
  std::atomic<uint64_t> rounds;    // acquire..release rounds started
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Owns the mapping; unmaps on destruction.
class SharedWorkerControl {
 public:
  // Creates (or truncates) `path`, zeroed: for the harness, before it starts
  // the worker.
  static absl::StatusOr<std::unique_ptr<SharedWorkerControl>> Create(const std::string& path);
  // Maps an existing file: for the worker.
  static absl::StatusOr<std::unique_ptr<SharedWorkerControl>> Attach(const std::string& path);
  ~SharedWorkerControl();
  SharedWorkerControl(const SharedWorkerControl&) = delete;
  SharedWorkerControl& operator=(const SharedWorkerControl&) = delete;

  WorkerControl* operator->() const { return control_; }
  WorkerControl& operator*() const { return *control_; }

 private:
  explicit SharedWorkerControl(WorkerControl* control) : control_(control) {}
  static absl::StatusOr<std::unique_ptr<SharedWorkerControl>> Map(const std::string& path,
                                                                   bool create);
  WorkerControl* const control_;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_WORKER_CONTROL_H_
