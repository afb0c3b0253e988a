// LoadHistory: what the clients of a failover load saw, checked as it
// happens: a grant while another client holds the resource, a token that
// does not grow on its resource, or a token seen twice is a violation.
// Also when the last grant of each resource was released, for the final
// check against the service's state, and the longest time without any grant.
//
// Thread safety: thread-safe; every client thread reports into one history.
#ifndef FENCEGATE_TESTS_CLUSTER_LOAD_HISTORY_H_
#define FENCEGATE_TESTS_CLUSTER_LOAD_HISTORY_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fencegate::testing {

class LoadHistory {
 public:
  explicit LoadHistory(int resources) : owner_(resources, -1), grants_(resources) {}

  // A grant was acknowledged to `client`.
  void Granted(int client, int resource, uint64_t token) {
    absl::MutexLock lock(&mu_);
    if (owner_[resource] != -1) {
      Violation(absl::StrCat("resource ", resource, " granted to client ", client,
                             " (token ", token, ") while client ", owner_[resource],
                             " holds it"));
    }
    owner_[resource] = client;
    std::vector<Grant>& grants = grants_[resource];
    if (!grants.empty() && token <= grants.back().token) {
      Violation(absl::StrCat("resource ", resource, ": token ", token, " after ",
                             grants.back().token));
    }
    if (!tokens_.insert(token).second) Violation(absl::StrCat("token ", token, " twice"));
    grants.push_back(Grant{token, false, false});
    ++acks_;
    if (marked_) ++acks_since_mark_;
    const absl::Time now = absl::Now();
    if (acks_ > 1) longest_gap_ = std::max(longest_gap_, now - last_ack_);
    last_ack_ = now;
  }
  // The longest time without any acknowledged grant (what a failover costs
  // the clients; reported, not asserted).
  absl::Duration longest_gap() {
    absl::MutexLock lock(&mu_);
    return longest_gap_;
  }
  // The holder stops using it and releases (before the call, so the next
  // holder cannot be mistaken for an overlap).
  void Releasing(int resource) {
    absl::MutexLock lock(&mu_);
    owner_[resource] = -1;
    grants_[resource].back().release_sent = true;
  }
  void Released(int resource, uint64_t token) {
    absl::MutexLock lock(&mu_);
    for (Grant& grant : grants_[resource]) {
      if (grant.token == token) grant.released = true;
    }
  }
  void Mark() {
    absl::MutexLock lock(&mu_);
    marked_ = true;
    acks_since_mark_ = 0;
  }
  int acks_since_mark() {
    absl::MutexLock lock(&mu_);
    return acks_since_mark_;
  }
  int acks() {
    absl::MutexLock lock(&mu_);
    return acks_;
  }
  std::vector<std::string> violations() {
    absl::MutexLock lock(&mu_);
    return violations_;
  }
  // The last acknowledged grant of `resource`: token, release acknowledged.
  struct Grant {
    uint64_t token = 0;
    bool release_sent = false;
    bool released = false;
  };
  std::optional<Grant> Last(int resource) {
    absl::MutexLock lock(&mu_);
    if (grants_[resource].empty()) return std::nullopt;
    return grants_[resource].back();
  }

 private:
  void Violation(std::string what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    violations_.push_back(std::move(what));
  }

  absl::Mutex mu_;
  std::vector<int> owner_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<Grant>> grants_ ABSL_GUARDED_BY(mu_);
  std::set<uint64_t> tokens_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
  int acks_ ABSL_GUARDED_BY(mu_) = 0;
  bool marked_ ABSL_GUARDED_BY(mu_) = false;
  int acks_since_mark_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_ack_ ABSL_GUARDED_BY(mu_);
  absl::Duration longest_gap_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::testing

#endif  // FENCEGATE_TESTS_CLUSTER_LOAD_HISTORY_H_
