// FencedStore's link seam (fenced_store.h, TestBuildBackend): the one
// source of the gateway's core that the torture suite's test builds replace.
// tests/torture/CMakeLists.txt links tests/torture/planted_gateway_bugs.cc
// in place of this file; there the store decides through a wrapper of its
// backend that plants the bug --planted_bug names (docs/torture.md,
// "Planted bugs"). Here, in production, nothing is wrapped: the store calls
// its backend directly, with no layer and no flag in between, and keeps its
// fence cache wherever the backend allows one (SoleFenceWriter()).
#include "gateway/fenced_store.h"

namespace fencegate::gateway {

FencedStore::TestBuild FencedStore::TestBuildBackend(StorageBackend* /*backend*/,
                                                     const FenceCache& /*cache*/) {
  return {};
}

}  // namespace fencegate::gateway
