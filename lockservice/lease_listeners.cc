#include "lockservice/lease_listeners.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate::lockservice {

void LeaseListeners::Add(LeaseListener* listener) { by_listener_.try_emplace(listener); }

void LeaseListeners::Remove(LeaseListener* listener) {
  auto it = by_listener_.find(listener);
  if (it == by_listener_.end()) return;
  for (uint64_t token : it->second) {
    auto lease = by_lease_.find(token);
    Listeners& listeners = lease->second;
    listeners.erase(std::find(listeners.begin(), listeners.end(), listener));
    if (listeners.empty()) by_lease_.erase(lease);
  }
  by_listener_.erase(it);
}

std::vector<LeaseListener*> LeaseListeners::RemoveAll() {
  std::vector<LeaseListener*> all;
  all.reserve(by_listener_.size());
  for (const auto& [listener, tokens] : by_listener_) all.push_back(listener);
  by_listener_.clear();
  by_lease_.clear();
  return all;
}

void LeaseListeners::Listen(LeaseListener* listener, uint64_t token) {
  auto it = by_listener_.find(listener);
  if (it == by_listener_.end()) return;          // not added, or removed since
  if (!it->second.insert(token).second) return;  // listens already
  by_lease_[token].push_back(listener);
}

LeaseListeners::Listeners LeaseListeners::End(uint64_t token) {
  auto lease = by_lease_.find(token);
  if (lease == by_lease_.end()) return {};
  Listeners listeners = std::move(lease->second);
  by_lease_.erase(lease);
  for (LeaseListener* listener : listeners) by_listener_[listener].erase(token);
  return listeners;
}

absl::Status LeaseListeners::CheckInvariant() const {
  size_t registrations = 0;
  for (const auto& [token, listeners] : by_lease_) {
    if (listeners.empty()) {
      return absl::InternalError(absl::StrCat("lease ", token, " has an empty entry"));
    }
    for (LeaseListener* listener : listeners) {
      auto it = by_listener_.find(listener);
      if (it == by_listener_.end()) {
        return absl::InternalError(
            absl::StrCat("lease ", token, " lists a listener that was not added"));
      }
      if (!it->second.contains(token)) {
        return absl::InternalError(
            absl::StrCat("lease ", token, " lists a listener that does not list it"));
      }
      ++registrations;
    }
  }
  size_t listed = 0;
  for (const auto& [listener, tokens] : by_listener_) listed += tokens.size();
  if (listed != registrations) {
    return absl::InternalError(absl::StrCat("listeners list ", listed,
                                            " registrations, leases ", registrations));
  }
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice
