#include "lockservice/core/lease_listeners.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate::lockservice {

void LeaseListeners::Add(LeaseListener* listener) {
  auto [it, added] = ids_.try_emplace(listener, next_id_);
  if (!added) return;
  by_id_.emplace(next_id_, listener);
  ++next_id_;
}

void LeaseListeners::Remove(LeaseListener* listener) {
  auto it = ids_.find(listener);
  if (it == ids_.end()) return;
  by_id_.erase(it->second);
  ids_.erase(it);
}

std::vector<LeaseListener*> LeaseListeners::TakeAll() {
  std::vector<LeaseListener*> all;
  all.reserve(ids_.size());
  for (const auto& [listener, id] : ids_) {
    listener->Ref();
    all.push_back(listener);
  }
  ids_.clear();
  by_id_.clear();
  more_.clear();
  return all;
}

void LeaseListeners::Listen(LeaseListener* listener, uint64_t token, ListenerId& first) {
  auto it = ids_.find(listener);
  if (it == ids_.end()) return;  // not added, or removed since
  const ListenerId id = it->second;
  if (first == id) return;
  if (first == 0) {
    first = id;
    return;
  }
  auto more = more_.find(token);
  if (more == more_.end()) {
    if (Live(first)) {
      more_[token].push_back(id);
    } else {
      first = id;  // its first listener went: it takes the place
    }
    return;
  }
  auto& rest = more->second;
  rest.erase(std::remove_if(rest.begin(), rest.end(),
                            [this](ListenerId other) { return !Live(other); }),
             rest.end());
  if (!Live(first) && !rest.empty()) {  // the earliest live one comes first
    first = rest.front();
    rest.erase(rest.begin());
  }
  if (!Live(first)) {
    first = id;
  } else if (first != id && std::find(rest.begin(), rest.end(), id) == rest.end()) {
    rest.push_back(id);
  }
  if (rest.empty()) more_.erase(more);
}

LeaseListeners::Listeners LeaseListeners::End(uint64_t token, ListenerId& first) {
  Listeners listeners;
  if (first == 0) return listeners;  // nobody listened: nothing more here
  auto add = [this, &listeners](ListenerId id) {
    auto live = by_id_.find(id);
    if (live != by_id_.end()) listeners.push_back(live->second);
  };
  add(first);
  first = 0;
  auto more = more_.find(token);
  if (more != more_.end()) {
    for (ListenerId id : more->second) add(id);
    more_.erase(more);
  }
  return listeners;
}

absl::Status LeaseListeners::CheckInvariant() const {
  if (ids_.size() != by_id_.size()) {
    return absl::InternalError(
        absl::StrCat(ids_.size(), " listeners have ", by_id_.size(), " ids"));
  }
  for (const auto& [listener, id] : ids_) {
    auto it = by_id_.find(id);
    if (id == 0 || id >= next_id_ || it == by_id_.end() || it->second != listener) {
      return absl::InternalError(absl::StrCat("listener id ", id, " does not map back"));
    }
  }
  for (const auto& [token, rest] : more_) {
    if (rest.empty()) {
      return absl::InternalError(absl::StrCat("lease ", token, " has an empty entry"));
    }
  }
  return absl::OkStatus();
}

void StopListeners(std::vector<LeaseListener*> listeners, const absl::Status& why) {
  for (LeaseListener* listener : listeners) {
    listener->OnStopped(why);
    listener->Unref();
  }
}

}  // namespace fencegate::lockservice
