// Microbenchmarks of the lock service's core inside one process: a grant
// (decision + token allocation + lease row, committed) and its release, on
// LockManager with the real clock.
//
//   BM_LockManagerCycle/sqlite   SqliteLockStore in a temp dir (WAL,
//                                synchronous=FULL): every batch fsyncs.
//                                T threads, each waiting for its replies, so
//                                group commit can batch across threads.
//   BM_LockManagerCycle/memory   a store whose commit does nothing: the CPU
//                                cost of the manager itself (mutex, maps,
//                                commit queue, callbacks), no I/O.
// Items = lock cycles (try-lock Acquire + Release, two commits each).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"
#include "fencegate/clock.h"
#include "harness/temp_dir.h"
#include "lockservice/core/lock_manager.h"
#include "lockservice/core/sqlite_lock_store.h"

namespace fencegate::lockservice {
namespace {

class MemoryLockStore final : public LockStore {
 public:
  absl::StatusOr<LockStoreState> Load() override { return LockStoreState(); }
  absl::Status Commit(const LockStoreBatch&) override { return absl::OkStatus(); }
  absl::StatusOr<std::vector<FencePosition>> ScanFencePositions(uint64_t,
                                                                size_t) override {
    return std::vector<FencePosition>();
  }
};

// Shared by the threads of one run (see gateway_bench.cc for the pattern).
struct SharedManager {
  std::unique_ptr<testing::TempDir> dir;
  std::unique_ptr<LockStore> store;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<LockManager> manager;
};
SharedManager* shared_manager = nullptr;

template <typename T>
absl::StatusOr<T> Wait(absl::FunctionRef<void(Callback<T>)> call) {
  absl::Notification done;
  absl::StatusOr<T> out = absl::UnknownError("no reply");
  call([&](absl::StatusOr<T> result) {
    out = std::move(result);
    done.Notify();
  });
  done.WaitForNotification();
  return out;
}

void LockManagerCycle(benchmark::State& state, bool sqlite) {
  if (state.thread_index() == 0) {
    shared_manager = new SharedManager;
    if (sqlite) {
      shared_manager->dir = std::make_unique<testing::TempDir>();
      auto store = SqliteLockStore::Open(shared_manager->dir->File("locks.db"));
      if (store.ok()) shared_manager->store = *std::move(store);
    } else {
      shared_manager->store = std::make_unique<MemoryLockStore>();
    }
    shared_manager->clock = NewRealClock();
    if (shared_manager->store != nullptr) {
      auto manager = LockManager::Create(shared_manager->store.get(),
                                         shared_manager->clock.get(), LockLimits());
      if (manager.ok()) shared_manager->manager = *std::move(manager);
    }
    if (shared_manager->manager == nullptr) state.SkipWithError("setup failed");
  }
  std::vector<std::string> resources;
  for (int i = 0; i < 100; ++i) {
    resources.push_back(absl::StrCat("t", state.thread_index(), "-r", i));
  }
  const std::string holder = absl::StrCat("holder-", state.thread_index());
  size_t next = 0;
  for (auto _ : state) {
    LockManager* manager = shared_manager->manager.get();
    if (manager == nullptr) break;
    const std::string& resource = resources[next++ % resources.size()];
    auto granted = Wait<AcquireResult>([&](Callback<AcquireResult> done) {
      AcquireArgs args;
      args.resource = resource;
      args.holder = holder;
      args.ttl = absl::Seconds(10);
      manager->Acquire(manager->NewCallId(), std::move(args), std::move(done));
    });
    if (!granted.ok() || !granted->acquired) {
      state.SkipWithError("Acquire failed or not granted");
      break;
    }
    auto released = Wait<ReleaseResult>([&](Callback<ReleaseResult> done) {
      ReleaseArgs args;
      args.resource = resource;
      args.token = granted->token;
      manager->Release(std::move(args), std::move(done));
    });
    if (!released.ok()) {
      state.SkipWithError("Release failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    shared_manager->manager.reset();  // before the store and clock it uses
    delete shared_manager;
    shared_manager = nullptr;
  }
}

BENCHMARK_CAPTURE(LockManagerCycle, sqlite, true)
    ->Name("BM_LockManagerCycle/sqlite")->Threads(1)->Threads(8)->Threads(32)->UseRealTime();
BENCHMARK_CAPTURE(LockManagerCycle, memory, false)
    ->Name("BM_LockManagerCycle/memory")->Threads(1)->Threads(8)->Threads(32)->UseRealTime();

}  // namespace
}  // namespace fencegate::lockservice
