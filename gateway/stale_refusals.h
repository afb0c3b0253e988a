// StaleRefusals: the gateway's record of the stale requests it refused,
// each one a write (or fenced read, or fence) from a holder whose lease
// was already superseded: a corruption fencing prevented.
//   - fencegate_gateway_stale_refused_total{rpc, class}: counted by RPC
//     (write, read, fence) and resource class;
//   - the last `capacity` refusals (resource, refused token, the fence it
//     met, when), newest first, for the status page.
//
// Resource class: labels never carry resource names, so a refusal is
// counted under the class of its resource: the text before the first '/'
// of the name (an "orders/1234" resource is of class "orders"), when that
// text is 1 to 32 bytes of [A-Za-z0-9_.-]; a name without '/' is
// "unclassified"; anything else, and any class past the first
// `max_classes` seen, is "other". So the label has at most max_classes + 2
// values, whatever clients name their resources.
//
// Cost: Record() takes a mutex and looks the class up in a small map; it
// runs only on a refusal, never for an accepted request.
//
// Thread safety: thread-safe. Ownership: `registry` must outlive this.
#ifndef FENCEGATE_GATEWAY_STALE_REFUSALS_H_
#define FENCEGATE_GATEWAY_STALE_REFUSALS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"

namespace fencegate::gateway {

class StaleRefusals {
 public:
  enum Rpc { kWrite, kRead, kFence };

  struct Refusal {
    std::string resource;  // cut to 200 bytes
    uint64_t token = 0;    // the refused token
    uint64_t fence = 0;    // the resource's fence at the time
    Rpc rpc = kWrite;
    absl::Time when;
  };

  StaleRefusals(metrics::Registry& registry, size_t capacity = 64,
                size_t max_classes = 16);

  void Record(Rpc rpc, absl::string_view resource, uint64_t token, uint64_t fence,
              absl::Time when);
  // Newest first.
  std::vector<Refusal> Recent();

  // The class `resource` counts under before the cap (see the header).
  static std::string ClassOf(absl::string_view resource);

 private:
  using Counters = std::array<metrics::Counter*, 3>;  // by Rpc
  Counters& CountersOf(absl::string_view resource) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  metrics::Family<metrics::Counter>& family_;
  const size_t capacity_;
  const size_t max_classes_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Counters> classes_ ABSL_GUARDED_BY(mu_);
  Counters other_ ABSL_GUARDED_BY(mu_){};
  std::deque<Refusal> recent_ ABSL_GUARDED_BY(mu_);
};

// "write", "read", "fence".
absl::string_view RpcName(StaleRefusals::Rpc rpc);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_STALE_REFUSALS_H_
