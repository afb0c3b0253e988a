// Microbenchmarks of the gateway's write path inside one process, on a real
// SQLite file in a temp dir (WAL, synchronous=FULL: every commit fsyncs):
//
//   BM_SqliteStorageBatch/N   one group-commit transaction of N fenced 1 KiB
//                             writes: BEGIN, N x (savepoint, fence check,
//                             fence raise, write), COMMIT. Items = writes, so
//                             items/s shows how far one fsync is amortized.
//   BM_FenceCheckRefused      a stale write refused inside an open batch: the
//                             cost of the check and the rollback to its
//                             savepoint, no commit.
//   BM_FencedStoreWrite       FencedStore::Write from T threads, each waiting
//                             for its reply: validation, queueing, group
//                             commit and callback, end to end without gRPC.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"
#include "gateway/fenced_store.h"
#include "gateway/sqlite_storage.h"
#include "harness/temp_dir.h"

namespace fencegate::gateway {
namespace {

constexpr int kResources = 1000;

std::vector<std::string> ResourceNames() {
  std::vector<std::string> names;
  for (int i = 0; i < kResources; ++i) names.push_back(absl::StrCat("res-", i));
  return names;
}

FencedOp WriteOp(absl::string_view resource, uint64_t token, absl::string_view key,
                 absl::string_view value) {
  FencedOp op;
  op.kind = OpKind::kWrite;
  op.resource = resource;
  op.token = token;
  Mutation mutation;
  mutation.key = key;
  mutation.kind = Mutation::Kind::kPut;
  mutation.value = value;
  op.mutations.push_back(mutation);
  return op;
}

std::unique_ptr<SqliteStorage> OpenStorage(const testing::TempDir& dir,
                                           benchmark::State& state) {
  auto storage = SqliteStorage::Open(dir.File("gateway.db"), 1);
  if (!storage.ok()) {
    state.SkipWithError(storage.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(storage);
}

void BM_SqliteStorageBatch(benchmark::State& state) {
  testing::TempDir dir;
  std::unique_ptr<SqliteStorage> storage = OpenStorage(dir, state);
  if (storage == nullptr) return;
  const std::vector<std::string> names = ResourceNames();
  const std::string value(1024, 'v');
  const int batch = static_cast<int>(state.range(0));
  uint64_t token = 0;
  uint64_t next = 0;
  for (auto _ : state) {
    if (!storage->BeginBatch({}).ok()) {
      state.SkipWithError("BeginBatch failed");
      break;
    }
    for (int i = 0; i < batch; ++i) {
      OpResult result;
      absl::Status applied =
          storage->Apply(WriteOp(names[next++ % kResources], ++token, "key", value), &result);
      if (!applied.ok() || result.outcome != Outcome::kAccepted) {
        state.SkipWithError("Apply refused or failed");
        break;
      }
    }
    if (!storage->CommitBatch().ok()) {
      state.SkipWithError("CommitBatch failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_SqliteStorageBatch)->Arg(1)->Arg(16)->Arg(128)->UseRealTime();

void BM_FenceCheckRefused(benchmark::State& state) {
  testing::TempDir dir;
  std::unique_ptr<SqliteStorage> storage = OpenStorage(dir, state);
  if (storage == nullptr) return;
  const std::string value(1024, 'v');
  OpResult result;
  if (!storage->BeginBatch({}).ok() ||
      !storage->Apply(WriteOp("res", 1000, "key", value), &result).ok() ||
      !storage->CommitBatch().ok() || !storage->BeginBatch({}).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  const FencedOp stale = WriteOp("res", 999, "key", value);
  for (auto _ : state) {
    absl::Status applied = storage->Apply(stale, &result);
    if (!applied.ok() || result.outcome != Outcome::kStaleToken) {
      state.SkipWithError("stale write was not refused");
      break;
    }
  }
  storage->AbortBatch();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FenceCheckRefused);

// Shared by the threads of one BM_FencedStoreWrite run; thread 0 sets it up
// before the timing loop (every thread enters the loop together) and tears
// it down after it (every thread leaves together).
struct SharedStore {
  std::unique_ptr<testing::TempDir> dir;
  std::unique_ptr<SqliteStorage> storage;
  std::unique_ptr<FencedStore> store;
};
SharedStore* shared_store = nullptr;

void BM_FencedStoreWrite(benchmark::State& state) {
  if (state.thread_index() == 0) {
    shared_store = new SharedStore;
    shared_store->dir = std::make_unique<testing::TempDir>();
    shared_store->storage = OpenStorage(*shared_store->dir, state);
    if (shared_store->storage != nullptr) {
      shared_store->store =
          std::make_unique<FencedStore>(shared_store->storage.get(), GatewayLimits());
    }
  }
  const std::string resource = absl::StrCat("thread-", state.thread_index());
  const std::string value(1024, 'v');
  for (auto _ : state) {
    if (shared_store->store == nullptr) break;
    WriteArgs args;
    args.resource = resource;
    args.token = 1;
    Mutation mutation;
    mutation.key = "key";
    mutation.kind = Mutation::Kind::kPut;
    mutation.value = value;
    args.mutations.push_back(mutation);
    absl::Notification done;
    bool ok = false;
    shared_store->store->Write(std::move(args), [&](absl::StatusOr<WriteResult> result) {
      ok = result.ok();
      done.Notify();
    });
    done.WaitForNotification();
    if (!ok) {
      state.SkipWithError("Write failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete shared_store;
    shared_store = nullptr;
  }
}
BENCHMARK(BM_FencedStoreWrite)->Threads(1)->Threads(8)->Threads(32)->UseRealTime();

}  // namespace
}  // namespace fencegate::gateway
