// NetworkCuts: the partitions of one torture run over its VirtualNetwork
// (harness/network_namespaces.h), counted, so that faults on
// different timelines may cut the same link at once: a link is cut while
// any fault holds it, and healed when the last one lets go. Every cut is
// both ways.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_TESTS_TORTURE_NETWORK_CUTS_H_
#define FENCEGATE_TESTS_TORTURE_NETWORK_CUTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "harness/network_namespaces.h"

namespace fencegate::torture {

// Links between hosts, by host name, as (from, to); cut both ways.
using Links = std::vector<std::pair<std::string, std::string>>;

// Every link between a host of `a` and a host of `b`.
Links Between(const std::vector<std::string>& a, const std::vector<std::string>& b);

class NetworkCuts {
 public:
  // `network` must outlive this.
  explicit NetworkCuts(testing::VirtualNetwork* network) : network_(network) {}

  // Holds `links` cut (both ways) until Release(links).
  absl::Status Hold(const Links& links);
  absl::Status Release(const Links& links);
  // Every cut healed, every hold forgotten.
  absl::Status HealAll();

 private:
  // (a, b) with a <= b: both ways are one link.
  static std::pair<std::string, std::string> Key(
      const std::pair<std::string, std::string>& l);

  testing::VirtualNetwork* const network_;
  absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, int> holds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_NETWORK_CUTS_H_
